"""The compile step: an ordinary object with the pre-optimization bitcode in section .enzyme.bc.

C/C++: `-Xclang -fembed-bitcode=all` embeds pre-optimization IR; the section is then renamed
(and marked exclude) so GNU ar's LLVM plugin ignores it and it never reaches final binaries.
Fortran: flang rejects -fembed-bitcode, so compile twice (native + -emit-llvm) and add the section.
The -emit-llvm job skips LLVM's optimization passes (`-mllvm -opt-bisect-limit=0`), so Fortran
objects carry pre-optimization IR too: the link step's pre-AD pipeline runs on both alike.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile

from . import toolchain
from .plugin import plugin_args
from .errors import UserError

C_LANGS = ("c", "c++", "objc", "other")
EMBED = ["-Xclang", "-fembed-bitcode=all"]


def default_object_name(src: str) -> str:
    base = os.path.basename(src)
    stem = base.rsplit(".", 1)[0] if "." in base else base
    return stem + ".o"


def run(cmd: list[str], verbose=False) -> int:
    if verbose:
        print("enzyme-cc: " + " ".join(cmd), file=sys.stderr)
    try:
        rc = subprocess.run(cmd).returncode
    except FileNotFoundError:
        raise UserError(f"cannot run '{cmd[0]}'; {toolchain.INSTALL_HINT}")
    return 128 - rc if rc < 0 else rc   # killed by signal N: 128+N, as a shell reports it


def compile_source(driver: str, inv, src, out: str, extra=()) -> int:
    """Compile one source to `out` with bitcode embedded. Returns the compiler's exit code.
    `extra`: options added after the command line's own (the link step's dependency-file names)."""
    args = inv.compile_args(src) + list(extra)
    if src.lang == "fortran":
        return _compile_fortran(inv, src, args, out)
    if src.lang in ("asm", "asm-cpp"):
        return run([toolchain.tool(_cdriver(driver))] + args + ["-c", src.path, "-o", out])
    fat_lto = _last_flag(args, "-ffat-lto-objects", "-fno-fat-lto-objects") and \
        _last_flag(args, "-flto", "-fno-lto", prefix=True)
    embed = [] if fat_lto else EMBED    # clang crashes on both; .llvm.lto holds the bitcode then
    cc = [toolchain.tool(_cdriver(driver))] + args + toolchain.include_args([src]) + \
        plugin_args([src])
    lto = _last_flag(args, "-flto", "-fno-lto", prefix=True)
    if inv.opt_level == "0" and not lto and src.path != "-":
        return _compile_O0(cc, inv, src, out)
    rc = run(cc + embed + ["-c", src.path, "-o", out], inv.verbose)
    if rc != 0 or fat_lto or _is_bitcode(out) or not os.path.isfile(out):
        return rc       # -flto: clang wrote bitcode, which the link reads; -o /dev/null: nothing
    return _objcopy(["--rename-section", ".llvmbc=.enzyme.bc,exclude", "--remove-section",
                     ".llvmcmd", out])


def _compile_O0(cc, inv, src, out) -> int:
    """-O0: clang emits no type-based alias metadata (TBAA), which type analysis relies on for
    untyped copies (C++ containers). Compile the object as asked, and the bitcode a second time
    at -O1 with LLVM's passes off: the same pre-optimization IR, with TBAA, without optnone."""
    rc = run(cc + ["-c", src.path, "-o", out], inv.verbose)
    if rc != 0 or _is_bitcode(out) or not os.path.isfile(out):
        return rc
    fd, bc = tempfile.mkstemp(suffix=".bc")
    os.close(fd)
    try:
        quiet, skip = [], False
        for a in cc:                                 # dependency files: the first job wrote them
            if skip:
                skip = False
                continue
            if a in ("-MF", "-MT", "-MQ"):
                skip = True
                continue
            if a.startswith(("-MD", "-MMD", "-MF", "-MT", "-MQ", "-MP")):
                continue
            quiet.append(a)
        r = subprocess.run(quiet + ["-O1", "-Xclang", "-disable-llvm-passes", "-emit-llvm", "-c",
                                    src.path, "-o", bc, "-w"], stderr=subprocess.PIPE, text=True,
                           errors="replace")
        if r.returncode != 0:
            sys.stderr.write(r.stderr)
            return r.returncode
        return _objcopy(["--add-section", f".enzyme.bc={bc}", "--set-section-flags",
                         ".enzyme.bc=exclude", out])
    finally:
        os.unlink(bc)


def _last_flag(args, on: str, off: str, prefix=False) -> bool:
    """Whether the last of `on`/`off` in args is `on` (with prefix: `-flto=thin` counts)."""
    state = False
    for a in args:
        if a == on or prefix and a.startswith(on + "="):
            state = True
        elif a == off:
            state = False
    return state


def _is_bitcode(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) in (b"BC\xc0\xde", b"\xde\xc0\x17\x0b")
    except OSError:
        return False


def _cdriver(driver: str) -> str:
    return "clang++" if driver == "clang++" else "clang"


def _compile_fortran(inv, src, args, out) -> int:
    flang = toolchain.tool("flang")
    rc = run([flang] + args + ["-c", src.path, "-o", out], inv.verbose)
    if rc != 0 or not os.path.isfile(out):
        return rc
    fd, bc = tempfile.mkstemp(suffix=".bc")
    os.close(fd)
    try:
        quiet = [a for a in args if not a.startswith(("-MD", "-MMD"))]
        # Its diagnostics repeat the native job's; opt-bisect reports each pass it skips.
        r = subprocess.run([flang] + quiet + ["-emit-llvm", "-mllvm", "-opt-bisect-limit=0", "-c",
                                              src.path, "-o", bc], stderr=subprocess.PIPE,
                           text=True, errors="replace")
        if r.returncode != 0:
            sys.stderr.write("".join(line for line in r.stderr.splitlines(keepends=True)
                                     if not line.startswith("BISECT: ")))
            return r.returncode
        return _objcopy(["--add-section", f".enzyme.bc={bc}", "--set-section-flags",
                         ".enzyme.bc=exclude", out])
    finally:
        os.unlink(bc)


def _objcopy(args) -> int:
    if args[-1].startswith("-"):       # `-.o` (from `-x c -`) is a file, not an option
        args = args[:-1] + ["./" + args[-1]]
    r = subprocess.run([toolchain.tool("objcopy")] + args, capture_output=True, text=True)
    if r.returncode != 0:
        raise UserError(f"llvm-objcopy failed on '{args[-1]}': {r.stderr.strip()}")
    return 0
