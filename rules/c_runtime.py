"""enzyme-cc's runtimes written in C (rules/mpi_*.c, rules/fortran_runtime.c): compiled to
bitcode by the toolchain's clang once, cached by their text and the compiler, for linking into a
program's module."""
from __future__ import annotations

import hashlib
import os
import tempfile
from enzyme_cc import toolchain
from enzyme_cc.cache import cache_root
from enzyme_cc.compile import run
from enzyme_cc.errors import UserError

_DIR = os.path.dirname(os.path.abspath(__file__))


def runtime_bitcode(sources: tuple, headers: tuple, what: str) -> list[bytes]:
    """The bitcode of each of `sources` (files next to this module, which may include
    `headers`)."""
    clang = toolchain.tool("clang")
    h = hashlib.sha256(clang.encode())
    for name in sources + headers:
        with open(os.path.join(_DIR, name), "rb") as f:
            h.update(name.encode() + f.read())
    root = cache_root()
    out = []
    for name in sources:
        path = os.path.join(root, f"{name[:-2]}-{h.hexdigest()[:24]}.bc")
        if os.path.isfile(path):
            with open(path, "rb") as f:
                out.append(f.read())
            continue
        with tempfile.TemporaryDirectory() as tmp:
            bc = os.path.join(tmp, "rt.bc")
            if run([clang, "-O2", "-fPIC", "-c", "-emit-llvm", os.path.join(_DIR, name), "-o",
                    bc]) != 0:
                raise UserError(f"internal error: cannot compile enzyme-cc's {what} ({name})")
            with open(bc, "rb") as f:
                out.append(f.read())
        try:                                     # atomic: parallel links never see half a file
            os.makedirs(root, exist_ok=True)
            part = f"{path}.{os.getpid()}.tmp"
            with open(part, "wb") as f:
                f.write(out[-1])
            os.replace(part, path)
        except OSError:
            pass                                 # a read-only cache only costs time
    return out
