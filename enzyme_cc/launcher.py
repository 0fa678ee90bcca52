"""The compiled fast path of enzyme-cc / enzyme-c++ / enzyme-fc (launcher/launcher.c): installed over the
Python entry scripts by `python -m enzyme_cc.launcher BINDIR` (scripts/setup.sh runs it).

Python's start-up and imports cost more than clang's compile of a small file, and a build starts
the wrapper once per source, so the common compile step (one C/C++ source, -c -o, -O1 and above,
known options; one Fortran source, -c -o, known options) runs without Python, and so does a link of objects and archives none of which holds
a marker name (clang's link, unchanged); every other command line goes to
`python -m enzyme_cc.cli`.
The paths the Python driver would use are compiled in, with the stat of the plugin's source and
of clang, so that a changed checkout or compiler sends the launcher back to Python until it is
rebuilt. Without this step (a plain `pip install`) the Python scripts do the same work, slower.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys

from . import toolchain
from .errors import UserError
from .plugin import SOURCE as PLUGIN_SOURCE, plugin_path
from .bitcode.libs import DEFAULT_LIB_DIRS
from .lto.link import MARKER_BYTES

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launcher", "launcher.c")
NAMES = ("enzyme-cc", "enzyme-c++", "enzyme-fc")


def _c_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def build_flags(python: str | None = None) -> list[str]:
    """-D definitions of what the launcher checks and runs (see launcher.c); `python`: the
    interpreter of the fallback (tests give a missing one to see which path a command took)."""
    clangxx = toolchain.tool("clang++")
    real = os.path.realpath(clangxx)
    st, src = os.stat(real), os.stat(PLUGIN_SOURCE)
    try:                                        # (no flang: enzyme-fc always goes to Python)
        flang = os.path.realpath(toolchain.tool("flang"))
        fst = os.stat(flang)
    except (UserError, OSError):
        flang, fst = "", None
    strings = {
        "PYTHON": python or sys.executable,
        "CLANG_NAME": toolchain.DEFAULTS["clang"],
        "CLANGXX_NAME": toolchain.DEFAULTS["clang++"],
        "OBJCOPY_NAME": toolchain.DEFAULTS["objcopy"],
        "CLANGXX_REAL": real,
        "FLANG_NAME": toolchain.DEFAULTS["flang"],
        "FLANG_REAL": flang,
        "PLUGIN": plugin_path(),
        "PLUGIN_SOURCE": PLUGIN_SOURCE,
        "INCLUDE_DIR": toolchain.include_dir(),
        # a link without markers (lto/link.py _may_call_markers, bitcode/libs.py)
        "MARKER": MARKER_BYTES[0].decode(),
        "LIB_DIRS": ":".join(DEFAULT_LIB_DIRS),
    }
    numbers = {"CLANGXX_MTIME_NS": st.st_mtime_ns, "CLANGXX_SIZE": st.st_size,
               "PLUGIN_SOURCE_MTIME_NS": src.st_mtime_ns, "PLUGIN_SOURCE_SIZE": src.st_size,
               "FLANG_MTIME_NS": fst.st_mtime_ns if fst else -1,
               "FLANG_SIZE": fst.st_size if fst else -1}
    return [f"-D{k}={_c_string(v)}" for k, v in strings.items()] + \
        [f"-D{k}={v}LL" for k, v in numbers.items()]


def install(bin_dir: str, python: str | None = None) -> bool:
    """Build the launcher into bin_dir/enzyme-cc and enzyme-c++ unless already current.
    Returns whether it built."""
    flags = build_flags(python)
    with open(SOURCE, "rb") as f:
        stamp = hashlib.sha256(f.read() + "\0".join(flags).encode()).hexdigest()
    stamp_path = os.path.join(bin_dir, ".enzyme-cc-launcher")
    targets = [os.path.join(bin_dir, n) for n in NAMES]
    try:
        with open(stamp_path) as f:
            current = f.read().strip() == stamp
        current &= all(_is_elf(t) for t in targets)
    except OSError:
        current = False
    if current:
        return False
    tmp = targets[0] + ".tmp"
    cmd = [toolchain.tool("clang"), "-O2", "-std=c11", "-Wall", "-Werror", *flags, SOURCE,
           "-o", tmp]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("building enzyme-cc's launcher failed:\n" + r.stderr)
    for t in targets:
        with open(tmp, "rb") as src, open(t + ".new", "wb") as dst:
            dst.write(src.read())
        os.chmod(t + ".new", 0o755)
        os.replace(t + ".new", t)
    os.unlink(tmp)
    with open(stamp_path, "w") as f:
        f.write(stamp + "\n")
    return True


def _is_elf(path: str) -> bool:
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m enzyme_cc.launcher BINDIR")
    install(sys.argv[1])
