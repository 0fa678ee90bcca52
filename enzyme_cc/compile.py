"""The compile step: an ordinary object with the pre-optimization bitcode in section .enzyme.bc.

C/C++: `-Xclang -fembed-bitcode=all` embeds pre-optimization IR; the section is then renamed
(and marked exclude) so GNU ar's LLVM plugin ignores it and it never reaches final binaries.
Fortran: flang rejects -fembed-bitcode, so compile twice (native + -emit-llvm) and add the section.
"""
from __future__ import annotations

import os
import subprocess
import tempfile

from . import toolchain
from .errors import UserError

C_LANGS = ("c", "c++", "objc", "other")
EMBED = ["-Xclang", "-fembed-bitcode=all"]


def default_object_name(src: str) -> str:
    base = os.path.basename(src)
    stem = base.rsplit(".", 1)[0] if "." in base else base
    return stem + ".o"


def run(cmd: list[str], verbose=False) -> int:
    if verbose:
        import sys
        print("enzyme-cc: " + " ".join(cmd), file=sys.stderr)
    try:
        return subprocess.run(cmd).returncode
    except FileNotFoundError:
        raise UserError(f"cannot run '{cmd[0]}'; {toolchain.INSTALL_HINT}")


def compile_source(driver: str, inv, src, out: str) -> int:
    """Compile one source to `out` with bitcode embedded. Returns the compiler's exit code."""
    args = inv.compile_args(src)
    if src.lang == "fortran":
        return _compile_fortran(inv, src, args, out)
    if src.lang in ("asm", "asm-cpp"):
        return run([toolchain.tool(_cdriver(driver))] + args + ["-c", src.path, "-o", out])
    rc = run([toolchain.tool(_cdriver(driver))] + args + EMBED + ["-c", src.path, "-o", out],
             inv.verbose)
    if rc != 0:
        return rc
    return _objcopy(["--rename-section", ".llvmbc=.enzyme.bc,exclude", "--remove-section",
                     ".llvmcmd", out])


def _cdriver(driver: str) -> str:
    return "clang++" if driver == "clang++" else "clang"


def _compile_fortran(inv, src, args, out) -> int:
    flang = toolchain.tool("flang")
    rc = run([flang] + args + ["-c", src.path, "-o", out], inv.verbose)
    if rc != 0:
        return rc
    fd, bc = tempfile.mkstemp(suffix=".bc")
    os.close(fd)
    try:
        quiet = [a for a in args if not a.startswith(("-MD", "-MMD"))]
        rc = subprocess.run([flang] + quiet + ["-emit-llvm", "-c", src.path, "-o", bc]).returncode
        if rc != 0:
            return rc
        return _objcopy(["--add-section", f".enzyme.bc={bc}", "--set-section-flags",
                         ".enzyme.bc=exclude", out])
    finally:
        os.unlink(bc)


def _objcopy(args) -> int:
    r = subprocess.run([toolchain.tool("objcopy")] + args, capture_output=True, text=True)
    if r.returncode != 0:
        raise UserError(f"llvm-objcopy failed on '{args[-1]}': {r.stderr.strip()}")
    return 0
