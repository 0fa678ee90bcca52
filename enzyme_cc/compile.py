"""The compile step: an ordinary object with the pre-optimization bitcode in section .enzyme.bc.

C/C++: `-Xclang -fembed-bitcode=all` embeds pre-optimization IR; the section is then renamed
(and marked exclude) so GNU ar's LLVM plugin ignores it and it never reaches final binaries.
Fortran: flang rejects -fembed-bitcode; it writes a fat LTO object instead (`-flto=full
-ffat-lto-objects`: the object, and in .llvm.lto its bitcode after LLVM's pre-link pipeline),
whose section is renamed likewise: one flang run, as a plain Fortran compile. A source that
names enzyme (markers may mark its loops) keeps pre-optimization IR: flang emits its IR, and
clang compiles that IR to the object, embedding it byte for byte.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys

from . import toolchain
from .plugin import plugin_args
from .cache import cache_root
from .fortran_mpi_headers import with_mpi_headers
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
    return _embedded_as_ours(out)


def _embedded_as_ours(out: str, section: str = ".llvmbc") -> int:
    """The bitcode section of `out` (clang's .llvmbc, or a fat LTO object's .llvm.lto) renamed
    .enzyme.bc (and it and .llvmcmd excluded from links)."""
    if _rename_in_place(out, section):
        return 0
    return _objcopy(["--rename-section", f"{section}=.enzyme.bc,exclude", "--remove-section",
                     ".llvmcmd", out])


SHF_EXCLUDE = 0x80000000


def _rename_in_place(path: str, section: str = ".llvmbc") -> bool:
    """What the objcopy above does, without starting a process (about a third of our compile
    overhead): in a little-endian ELF64 object whose section-name table is the last section
    before the section headers (LLVM writes them so), append ".enzyme.bc" to that table, point
    .llvmbc's name at it and set SHF_EXCLUDE on it and on .llvmcmd (the linker then drops
    both). False, with the file unchanged, for any other layout: objcopy does it then."""
    import struct
    with open(path, "r+b") as f:
        data = f.read()
        if data[:6] != b"\x7fELF\x02\x01" or len(data) < 64:
            return False
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        if shentsize != 64 or shoff + shnum * 64 != len(data) or not 0 < shstrndx < shnum:
            return False
        hdrs = [list(struct.unpack_from("<IIQQQQIIQQ", data, shoff + 64 * k))
                for k in range(shnum)]
        strtab = hdrs[shstrndx]
        soff, ssize = strtab[4], strtab[5]
        if any(h[1] != 8 and h[4] + h[5] > soff and k != shstrndx      # 8: SHT_NOBITS
               for k, h in enumerate(hdrs)) or soff + ssize > shoff:
            return False

        def name(h):
            return data[soff + h[0]:data.index(b"\0", soff + h[0])]
        names = [name(h) for h in hdrs]
        if names.count(section.encode()) != 1 or b".enzyme.bc" in names:
            return False
        table = data[soff:soff + ssize] + b".enzyme.bc\0"
        for h, n in zip(hdrs, names):
            if n == section.encode():
                h[0] = ssize
                h[2] |= SHF_EXCLUDE
            elif n == b".llvmcmd":
                h[2] |= SHF_EXCLUDE
        strtab[5] = len(table)
        new_shoff = (soff + len(table) + 7) & ~7
        out = table + bytes(new_shoff - soff - len(table)) + b"".join(
            struct.pack("<IIQQQQIIQQ", *h) for h in hdrs)
        f.seek(0x28)
        f.write(struct.pack("<Q", new_shoff))
        f.seek(soff)
        f.write(out)
        f.truncate()
    return True


def _compile_O0(cc, inv, src, out) -> int:
    """-O0: clang emits no type-based alias metadata (TBAA), which type analysis relies on for
    untyped copies (C++ containers). Compile the object as asked, and the bitcode a second time
    at -O1 with LLVM's passes off: the same pre-optimization IR, with TBAA, without optnone."""
    rc = run(cc + ["-c", src.path, "-o", out], inv.verbose)
    if rc != 0 or _is_bitcode(out) or not os.path.isfile(out):
        return rc
    with _ir_file(src.path) as bc:
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


@contextlib.contextmanager
def _ir_file(src_path: str):
    """A path for an IR file named after the source, in a fresh directory removed afterwards
    (the name clang records is then the same every build, so the object is too)."""
    import tempfile                 # (not on the common path: start-up time)
    tmp = tempfile.mkdtemp(prefix="enzyme-cc-ir-")
    try:
        yield os.path.join(tmp, os.path.splitext(os.path.basename(src_path))[0] + ".bc")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


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
    """One flang run: the object, with its bitcode after LLVM's full-LTO pre-link pipeline
    beside it (`-flto=full -ffat-lto-objects`: the .llvm.lto section, renamed .enzyme.bc), for
    the cost of a plain flang compile. A source that names enzyme (a marker's interface, a
    module of them) may mark loops (__enzyme_set_fixed_point, checkpointing), which the link
    step must see before any optimization: it keeps its IR before LLVM's passes instead
    (_compile_fortran_unoptimized). A user's own -flto goes to flang as asked (the link reads
    its bitcode objects, or their .llvm.lto)."""
    flang = toolchain.tool("flang")
    args = _openmp_include(with_mpi_headers(args, flang), flang)
    if _last_flag(args, "-flto", "-fno-lto", prefix=True):
        return run([flang] + args + ["-c", src.path, "-o", out], inv.verbose)
    if _names_enzyme(src.path):
        return _compile_fortran_unoptimized(inv, src, args, out)
    rc = run([flang] + args + FAT_LTO + ["-c", src.path, "-o", out], inv.verbose)
    if rc != 0 or not os.path.isfile(out):
        return rc                       # (-o /dev/null: configure's probes)
    return _embedded_as_ours(out, ".llvm.lto")


def _openmp_include(args: list[str], flang: str) -> list[str]:
    """With -fopenmp, a directory holding flang's `omp_lib.h` last on the include path: flang
    finds its `omp_lib` module but not the header (`include 'omp_lib.h'`, which gfortran and
    ifort find; SNAP's plib.F90). A copy in enzyme-cc's cache, alone: flang's own directory on
    the include path would make its intrinsic modules (iso_c_binding) ordinary ones."""
    if not _last_flag(args, "-fopenmp", "-fno-openmp", prefix=True):
        return args
    header = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(flang))), "include",
                          "flang", "omp_lib.h")
    try:
        with open(header, "rb") as f:
            data = f.read()
    except OSError:
        return args
    inc = os.path.join(cache_root(), "flang-omp-lib", hashlib.sha256(data).hexdigest()[:16])
    if not os.path.isfile(os.path.join(inc, "omp_lib.h")):
        try:
            os.makedirs(inc, exist_ok=True)
            part = os.path.join(inc, f"omp_lib.h.{os.getpid()}.tmp")
            with open(part, "wb") as f:
                f.write(data)
            os.replace(part, os.path.join(inc, "omp_lib.h"))     # atomic under make -j
        except OSError:
            return args
    return args + ["-I" + inc]


# flang writes the object and, in .llvm.lto, its pre-link bitcode
FAT_LTO = ["-flto=full", "-ffat-lto-objects"]


def _names_enzyme(path: str) -> bool:
    """The source mentions enzyme (any case): a marker's name, or a module or include of them."""
    try:
        with open(path, "rb") as f:
            return b"enzyme" in f.read().lower()
    except OSError:
        return True


def _compile_fortran_unoptimized(inv, src, args, out) -> int:
    """flang's LLVM IR before LLVM's passes (opt-bisect at 0), which becomes the object's
    .enzyme.bc, and the object compiled from that IR by clang (LLVM's O<level> pipeline and
    codegen, as flang runs them): a second backend, but flang's front end once."""
    flang = toolchain.tool("flang")
    with _ir_file(src.path) as bc:
        cmd = [flang] + args + ["-emit-llvm"] + _NO_LLVM_PASSES + ["-c", src.path, "-o", bc]
        rc = run(cmd, inv.verbose)
        if rc != 0:
            return rc
        # clang embeds an IR input as it is: the section holds flang's IR, byte for byte
        cc = [toolchain.tool("clang")] + [a for a in args if _codegen_flag(a)] + \
            ["-Wno-unused-command-line-argument", "-Wno-deprecated-ofast"] + EMBED + \
            ["-c", bc, "-o", out]      # (flang has warned of what the user wrote)
        rc = run(cc, inv.verbose)
        if rc != 0 or not os.path.isfile(out):
            return rc                   # (-o /dev/null: configure's probes)
        return _embedded_as_ours(out)


# flang's LLVM passes skipped (opt-bisect at 0, without its report of each skipped pass)
_NO_LLVM_PASSES = ["-mllvm", "-opt-bisect-limit=0", "-mllvm", "-opt-bisect-verbose=false"]

# flang options that matter when its IR is compiled to an object (the rest: front end only)
_CODEGEN_FLAGS = ("-O", "-fPIC", "-fpic", "-fPIE", "-fpie", "-fno-pic", "-fno-pie", "-march=",
                  "-mcpu=", "-mtune=", "-m64", "-m32", "-ffunction-sections", "-fdata-sections",
                  "-fomit-frame-pointer", "-fno-omit-frame-pointer", "--target=", "-g")


def _codegen_flag(a: str) -> bool:
    return a.startswith(_CODEGEN_FLAGS) and not a.startswith(("-gen", "-Og"))


def _objcopy(args) -> int:
    if args[-1].startswith("-"):       # `-.o` (from `-x c -`) is a file, not an option
        args = args[:-1] + ["./" + args[-1]]
    r = subprocess.run([toolchain.tool("objcopy")] + args, capture_output=True, text=True)
    if r.returncode != 0:
        raise UserError(f"llvm-objcopy failed on '{args[-1]}': {r.stderr.strip()}")
    return 0
