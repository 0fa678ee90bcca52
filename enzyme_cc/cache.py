"""The on-disk cache of link results: the AD object of a whole link (lto/link.py) and the
native object of each post-AD part (lto/optimize.py), each named by a hash of what made it.

Safe under `make -j`: an entry is written to a temporary file and renamed into place, so a
reader sees a whole file or none, and an entry removed while another link reads it only costs
that link a miss. Bounded: once a link has stored its entries (`trim`), when the entries take
more than the cap (`ENZYME_CC_CACHE_SIZE` in MiB, default 2048), the least recently used ones
are removed until they take 3/4 of it (a hit refreshes an entry's time). `ENZYME_CC_CACHE=0`
turns it off.
"""
from __future__ import annotations

import os
import shutil

DEFAULT_CAP_MIB = 2048


def default_root() -> str:
    """The cache folder without ENZYME_CC_CACHE_DIR: where `scripts/setup.sh` built the plugin."""
    return os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                        "enzyme-cc")


def cache_root() -> str:
    """enzyme-cc's cache folder (also the clang plugin's and the Python bridge's)."""
    return os.environ.get("ENZYME_CC_CACHE_DIR") or default_root()


def enabled() -> bool:
    return os.environ.get("ENZYME_CC_CACHE", "1") not in ("0", "false", "no", "off")


def _dir() -> str:
    return os.path.join(cache_root(), "link")


def fetch(name: str, dest: str) -> bool:
    """Copy entry `name` to dest; False when there is none (or it vanished meanwhile)."""
    if not enabled():
        return False
    path = os.path.join(_dir(), name)
    try:
        shutil.copyfile(path, dest)
        os.utime(path)                         # recently used
        return True
    except OSError:
        return False


def store(name: str, src: str) -> None:
    """Make file src entry `name` (atomically). A cache that cannot be written only costs
    time."""
    if not enabled():
        return
    d = _dir()
    try:
        if not os.path.isdir(d):
            os.makedirs(d, exist_ok=True)
            _drop_unbounded(cache_root())
        tmp = os.path.join(d, f".{name}.{os.getpid()}.tmp")
        shutil.copyfile(src, tmp)
        os.replace(tmp, os.path.join(d, name))
    except OSError:
        pass


def trim() -> None:
    """Keep the cache under its cap (after a link's stores: one scan of the folder, not one
    per entry stored)."""
    d = _dir()
    if enabled() and os.path.isdir(d):
        try:
            _evict(d)
        except OSError:
            pass


def _drop_unbounded(root: str) -> None:
    """Remove the AD objects that versions before the cap kept beside the other caches
    (`<sha256>.o` and `.o.native`, never evicted)."""
    with os.scandir(root) as it:
        for e in it:
            stem = e.name.split(".", 1)[0]
            if len(stem) == 64 and e.name[64:] in (".o", ".o.native") and \
                    all(c in "0123456789abcdef" for c in stem):
                try:
                    os.remove(e.path)
                except OSError:
                    pass


def _cap_bytes() -> int:
    try:
        return int(float(os.environ.get("ENZYME_CC_CACHE_SIZE", DEFAULT_CAP_MIB)) * (1 << 20))
    except ValueError:
        return DEFAULT_CAP_MIB << 20


def _evict(d: str) -> None:
    entries = []
    with os.scandir(d) as it:
        for e in it:
            try:
                st = e.stat()
            except OSError:
                continue                       # removed by a concurrent link
            entries.append((st.st_mtime, st.st_size, e.path))
    cap = _cap_bytes()
    total = sum(size for _, size, _ in entries)
    if total <= cap:
        return
    for _, size, path in sorted(entries):
        if total <= cap * 3 // 4:
            break
        try:
            os.remove(path)
        except OSError:
            pass
        total -= size
