"""The clang plugin that gives Enzyme's source attributes (enzyme_inactive, enzyme_function_like,
enzyme_shadow, ...) their meaning: plugin/enzyme_attributes.cpp, built once per machine and clang.

Without it clang warns "unknown attribute ignored" and drops them, and the derivative comes out
silently wrong, so every C-family compile loads it. It is built on first use (about 15 s) into the
cache directory, keyed by its source and the compiler that loads it; `scripts/setup.sh` builds it
at install time, and a cache directory set by ENZYME_CC_CACHE_DIR uses that one. Concurrent
compiles (make -j) wait on a lock and build it once.
"""
from __future__ import annotations

import hashlib
import os

from . import toolchain
from .cache import cache_root, default_root
from .errors import UserError

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plugin", "enzyme_attributes.cpp")
C_FAMILY = ("c", "c++", "objc", "cuda")
HEADERS_HINT = "install clang's development headers (Debian: `apt-get install libclang-22-dev`)"


def plugin_args(sources) -> list[str]:
    """`-fplugin=...` when any source is C-family (it also answers __has_attribute in -E)."""
    if not any(s.lang in C_FAMILY for s in sources):
        return []
    return ["-fplugin=" + plugin_path()]


def plugin_path() -> str:
    """The built plugin for the clang in use; builds it if missing."""
    clangxx = toolchain.tool("clang++")
    real = os.path.realpath(clangxx)
    with open(SOURCE, "rb") as f:
        key = hashlib.sha256(f.read() + real.encode() + str(os.path.getmtime(real)).encode())
    name = f"enzyme-attributes-{key.hexdigest()[:16]}.so"
    path = os.path.join(cache_root(), name)
    if os.path.exists(path):
        return path
    # a cache folder of its own (ENZYME_CC_CACHE_DIR: per project, per CI job) takes the plugin
    # set-up built, the same source for the same clang, instead of building it again (15-25 s)
    built = os.path.join(default_root(), name)
    if os.path.exists(built):
        return built
    import fcntl
    os.makedirs(cache_root(), exist_ok=True)
    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)           # another compile may be building it
        if not os.path.exists(path):
            _build(clangxx, real, path)
    return path


def _build(clangxx: str, real: str, path: str) -> None:
    import subprocess
    import tempfile
    include = os.path.join(os.path.dirname(os.path.dirname(real)), "include")
    if not os.path.exists(os.path.join(include, "clang", "Sema", "ParsedAttr.h")):
        raise UserError(f"enzyme-cc needs clang's headers to build its attribute plugin; "
                        f"{HEADERS_HINT}")
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=os.path.dirname(path))
    os.close(fd)
    cmd = [clangxx, "-shared", "-fPIC", "-std=c++17", "-O1", "-fno-rtti", "-w",
           "-D__STDC_CONSTANT_MACROS", "-D__STDC_FORMAT_MACROS", "-D__STDC_LIMIT_MACROS",
           "-isystem", include, SOURCE, "-o", tmp]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        os.unlink(tmp)
        raise UserError("building enzyme-cc's attribute plugin failed:\n" + r.stderr.strip()[-2000:]
                        + f"\nhint: {HEADERS_HINT}")
    os.replace(tmp, path)
