"""Building a declared function into a shared library with enzyme-cc, cached by content: the
sources and the headers they include, the flags, the signature and enzyme-cc's version and
code. A second build of the same input costs a hash and clang's dependency scan."""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

from .. import __version__, cache
from ..errors import UserError
from ..toolchain import tool
from .codegen import wrapper_source

LANGS = {".c": "c", ".cc": "c++", ".cpp": "c++", ".cxx": "c++", ".C": "c++",
         ".f90": "fortran", ".f": "fortran", ".F90": "fortran", ".f95": "fortran", ".F": "fortran"}
DRIVERS = {"c": "enzyme-cc", "c++": "enzyme-c++", "fortran": "enzyme-fc"}
TOOLCHAIN = {"c": "clang", "c++": "clang++", "fortran": "flang"}
SOURCE_EXT = {"c": ".c", "c++": ".cpp", "fortran": ".f90"}


class BuildError(RuntimeError):
    """enzyme-cc failed; the message is enzyme-cc's own."""


class CompilerNotFound(BuildError):
    """enzyme-cc, or the LLVM 22 compiler it drives, is not installed."""


def cache_root():
    return os.path.join(cache.cache_root(), "ffi")


def helper_library(src: str, prefix: str, flags: list[str], identity: str) -> str:
    """A shared library of ours (the JAX handler, the torch node) built from C++ source `src`
    with clang++ and `flags` against a framework's headers, once: cached by the source, the
    flags and `identity` (the framework's version)."""
    with open(src, "rb") as f:
        code = f.read()
    key = hashlib.sha256(code + repr((identity, flags)).encode()).hexdigest()[:24]
    lib = os.path.join(cache_root(), f"{prefix}-{key}.so")
    if not os.path.isfile(lib):
        check_toolchain({"c++"})
        os.makedirs(cache_root(), exist_ok=True)
        tmp = f"{lib}.{os.getpid()}.tmp"
        r = subprocess.run([tool("clang++"), src, "-o", tmp] + flags, capture_output=True,
                           text=True)
        if r.returncode:
            raise BuildError(f"building {os.path.basename(src)} failed:\n"
                             f"{r.stderr.strip()[-3000:]}")
        os.replace(tmp, lib)
    return lib


def driver(lang):
    """The enzyme-cc driver for a language: beside this Python (a venv's bin), else on PATH."""
    name = DRIVERS[lang]
    here = os.path.join(os.path.dirname(sys.executable), name)
    found = here if os.access(here, os.X_OK) else shutil.which(name)
    if not found:
        raise CompilerNotFound(f"cannot find {name} (install the enzyme-cc package into this "
                               "Python environment, or put it on PATH)")
    return found


def check_toolchain(langs):
    """The compilers enzyme-cc will run: a missing one is named before any build starts."""
    try:
        for lang in sorted(langs):
            tool(TOOLCHAIN[lang])
        tool("lld")
    except UserError as e:
        raise CompilerNotFound(f"enzyme-cc: error: {e.message}") from None


def _code_digest():
    from ..lto.link import _code_digest as digest      # (read once per process there)
    return digest()


def read_sources(sources, source, lang):
    """[(file name, language, bytes)] from paths and/or one source string."""
    out = []
    for path in sources:
        path = os.fspath(path)
        ext = os.path.splitext(path)[1]
        if ext not in LANGS:
            raise BuildError(f"{path}: unknown source language (use .c, .cpp, .f90, ...)")
        try:
            with open(path, "rb") as f:
                out.append((os.path.abspath(path), LANGS[ext], f.read()))
        except OSError as e:
            raise BuildError(f"cannot read source {path}: {e.strerror}") from None
    if source is not None:
        if lang not in DRIVERS:
            raise BuildError(f"lang must be one of {', '.join(DRIVERS)}, not {lang!r}")
        out.append((f"source{SOURCE_EXT[lang]}", lang, source.encode()))
    if not out:
        raise BuildError("nothing to build: give sources=[...] or source=...")
    return out


def sources_digest(srcs, flags) -> bytes:
    """What a build of these sources depends on: each source's name, language and bytes, and
    the bytes of the files it includes (a header beside it or on the -I path: an edit there
    must rebuild, not reuse the cached library)."""
    h = hashlib.sha256()
    for name, lg, data in srcs:
        h.update(repr((os.path.basename(name), lg)).encode() + hashlib.sha256(data).digest())
        for dep in sorted(_includes(name, lg, data, flags)):
            try:
                with open(dep, "rb") as f:
                    content = hashlib.sha256(f.read()).digest()
            except OSError:
                content = b"missing"
            h.update(dep.encode() + content)
    return h.digest()


def _source_dir_flags(name, lg) -> list[str]:
    """The directory of a source read from a path, where its quoted includes are found (it is
    compiled from a copy elsewhere)."""
    if not os.path.isabs(name):
        return []                           # a source string: no directory of its own
    return ["-I" if lg == "fortran" else "-iquote", os.path.dirname(name)]


_FORTRAN_INCLUDE = re.compile(r"""^\s*(?:#\s*include|include)\s*["']([^"']+)["']""",
                              re.IGNORECASE | re.MULTILINE)


def _includes(name, lg, data, flags) -> set[str]:
    """The files a source includes outside the system's headers: clang's dependency list for
    C and C++; for Fortran (flang lists none) the INCLUDE and #include lines, two levels deep,
    found beside the source or on the -I path."""
    if lg != "fortran":
        try:
            clang = tool(TOOLCHAIN[lg])
        except UserError:
            return set()                    # the build names the missing compiler
        r = subprocess.run([clang, *flags, *_source_dir_flags(name, lg), "-MM", "-MF", "-",
                            "-x", lg, "-"], input=data, capture_output=True)
        if r.returncode:
            return set()                    # the compile reports it
        deps = r.stdout.decode(errors="replace").replace("\\\n", " ").split(":", 1)[-1]
        return {os.path.abspath(d) for d in deps.split() if d != "-"}
    dirs = [os.path.dirname(name) if os.path.isabs(name) else os.getcwd()]
    dirs += [f[2:] for f in flags if f.startswith("-I") and len(f) > 2]
    dirs += [flags[k + 1] for k, f in enumerate(flags[:-1]) if f == "-I"]
    out, todo = set(), [(data, 0)]
    while todo:
        text, depth = todo.pop()
        for inc in _FORTRAN_INCLUDE.findall(text.decode(errors="replace")):
            path = next((os.path.abspath(os.path.join(d, inc)) for d in dirs
                         if os.path.isfile(os.path.join(d, inc))), None)
            if path and path not in out:
                out.add(path)
                if depth < 2:
                    with open(path, "rb") as f:
                        todo.append((f.read(), depth + 1))
    return out


def build_library(sigs, sources=(), source=None, lang="c", flags=("-O2",), link_flags=(),
                  order=1):
    """Path of a shared library holding each signature's ecc_{primal,vjp,jvp}_<name> (and with
    order=2 the second-order ecc_{vjp_jvp,jvp_jvp}_<name>)."""
    if order not in (1, 2):
        raise BuildError(f"order must be 1 or 2, not {order!r}")
    srcs = read_sources(sources, source, lang)
    flags, link_flags = list(flags), list(link_flags)
    h = hashlib.sha256()
    h.update(repr((__version__, [s.key() for s in sigs], flags, link_flags, order)).encode())
    h.update(sources_digest(srcs, flags))
    h.update(_code_digest())
    out_dir = os.path.join(cache_root(), h.hexdigest()[:32])
    lib = os.path.join(out_dir, "lib.so")
    if os.path.isfile(lib):
        return lib
    langs = {lg for _, lg, _ in srcs} | {"c"}
    check_toolchain(langs)
    os.makedirs(cache_root(), exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="build-", dir=cache_root())
    try:
        # the user's sources with debug info: the prototype check reads their C types (and
        # which scalar inputs C takes by value, which the wrappers then pass as values)
        objs = compile_sources(tmp, srcs, flags, debug=True)
        by_value = check_prototypes(sigs, objs, bool(link_flags), srcs)
        wrappers = [wrapper_source(s, order, by_value.get(s.name, frozenset())) for s in sigs]
        objs += compile_sources(tmp, [(f"ecc_wrap_{s.name}.c", "c", text.encode())
                                      for s, text in zip(sigs, wrappers)], flags,
                                start=len(srcs))
        linker = "fortran" if "fortran" in langs else "c++" if "c++" in langs else "c"
        extra = ["-lstdc++"] if linker == "fortran" and "c++" in langs else []
        _run([driver(linker), *flags, "-shared", "-fPIC", *objs, *link_flags, *extra, "-lm",
              "-Wl,--no-undefined", "-o", os.path.join(tmp, "lib.so")], "the link")
        with open(os.path.join(tmp, "wrapper.c"), "w") as f:
            f.write("\n".join(wrappers))
        try:
            os.rename(tmp, out_dir)     # atomic: concurrent builds of one input both succeed
        except OSError:
            if not os.path.isfile(lib):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return lib


def compile_sources(tmp, srcs, flags, debug=False, start=0) -> list[str]:
    """Each (name, language, bytes) compiled by its enzyme-cc driver into an object in tmp
    (with -g if `debug` and the flags give none); their paths."""
    extra = ["-g"] if debug and not any(f.startswith("-g") for f in flags) else []
    objs = []
    for i, (name, lg, data) in enumerate(srcs, start):
        path = os.path.join(tmp, f"{i}_{os.path.basename(name)}")
        with open(path, "wb") as f:
            f.write(data)
        modules = ["-J", tmp] if lg == "fortran" else []     # (its .mod files: not the cwd)
        _run([driver(lg), *flags, *extra, *_source_dir_flags(name, lg), *modules, "-fPIC", "-c",
              path, "-o", path + ".o"], name, copy=path)
        objs.append(path + ".o")
    return objs


def check_prototypes(sigs, objs, more_code: bool, srcs=()):
    """Each declared function against its compiled prototype (ffi/prototype.py); a function
    the sources do not define is named, unless the link flags may bring it. Returns, per
    function, the scalar inputs C takes by value."""
    from enzyme_cc.bitcode.elf import bitcode_modules
    from .fortran_intent import intents
    from .prototype import check, check_inputs_unwritten, find
    modules = []
    for obj in objs:
        with open(obj, "rb") as f:
            modules += bitcode_modules(f.read(), obj)
    by_value = {}
    for sig in sigs:
        proto, module = find(modules, sig.symbol, with_module=True)
        if proto is not None:
            by_value[sig.name] = check(sig, proto)
            declared_in = {k for k, v in intents(srcs, sig.name).items() if v == "in"}
            check_inputs_unwritten(sig, proto, module, declared_in)
        elif not more_code:
            raise BuildError(f"'{sig.name}' is not defined in the given sources (C++: declare "
                                 "it extern \"C\"; Fortran: bind(c))")
        sig.check_complete()
    return by_value


def _run(cmd, what, copy=None):
    """Run a build step; its messages name the user's source `what` where they name our copy
    of it."""
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        msg = (r.stderr + r.stdout).strip() or f"exit status {r.returncode}"
        if copy:
            msg = msg.replace(copy, what)
        raise BuildError(f"building {os.path.basename(what)} failed:\n{msg}")
