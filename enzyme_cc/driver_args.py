"""Classify a clang/flang command line the way clang's driver does: which inputs are sources,
which are linker inputs, which options belong to the compile jobs and which to the link.

The wrappers use this to decide whether to pass a command through untouched, compile each
source with embedded bitcode, or run the link-time AD pipeline. Everything is table driven:
OPTIONS says how many tokens an option takes and which derived command line keeps it.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from .errors import UserError

# Arity, as in clang's Options.td: a FLAG stands alone; SEP takes the next token; JOINED carries
# its value in the same token (a prefix match); JOS accepts both ("-ofile" and "-o file").
FLAG, SEP, JOINED, JOS = "flag", "sep", "joined", "jos"

# Keep: which derived command line keeps the option. 'both' = compile jobs and link;
# 'link' = link only; 'compile' = compile jobs only (dependency output); 'none' = neither (-c);
# 'x' = -x, kept by compile_args only in front of a source it applies to.


@dataclass(frozen=True)
class Opt:
    arity: str
    keep: str = "both"
    kind: str = ""  # special meaning read by classify(): o x l L O c stop M v shared static


def _opts(arity: str, keep: str, names: str, kind: str = "") -> dict[str, Opt]:
    return {n: Opt(arity, keep, kind) for n in names.split()}


OPTIONS: dict[str, Opt] = {
    # values that are paths or names, shared by compile jobs and the link
    **_opts(JOS, "both", "-I -D -U -isystem -iquote -idirafter -include -imacros -isysroot -F -B "
                         "-A -iprefix -iwithprefix -iwithprefixbefore -iframework "
                         "-isystem-after -cxx-isystem -ivfsoverlay"),
    **_opts(SEP, "both", "-Xclang -Xassembler -Xpreprocessor -target -arch --sysroot "
                         "-gcc-toolchain -resource-dir -include-pch --param "
                         "--serialize-diagnostics"),
    **_opts(JOINED, "both", "--target= --sysroot= --gcc-toolchain= -resource-dir= -std= "
                            "-fmodule-file= -Wp,"),
    **_opts(FLAG, "both", "-undef -ObjC -ObjC++ -pthread"),
    # link-only
    **_opts(JOS, "link", "-u -T"),
    **_opts(SEP, "link", "-Xlinker -z -e"),
    **_opts(JOINED, "link", "-Wl, -fuse-ld= --ld-path= -rtlib= --rtlib= -unwindlib= "
                            "--unwindlib= -Z"),
    **_opts(FLAG, "link", "-rdynamic -pie -no-pie -nostdlib -nodefaultlibs -nostartfiles -s -r "
                          "-static-libgcc -static-libstdc++ -shared-libgcc -static-pie"),
    "-shared": Opt(FLAG, "link", "shared"),
    "-static": Opt(FLAG, "link", "static"),
    "-o": Opt(JOS, "link", "o"),
    "-l": Opt(JOS, "link", "l"),
    "-L": Opt(JOS, "link", "L"),
    # compile-only: dependency files (the wrapper compiles each source separately with them),
    # and options that a link-only clang/flang reports unused (an error under -Werror; measured)
    **_opts(FLAG, "compile", "-MD -MMD -MP -MG -MV"),
    **_opts(JOS, "compile", "-MF -MT -MQ -MJ -J"),
    **_opts(SEP, "compile", "-mllvm -module-dir"),
    "-Wa,": Opt(JOINED, "compile"),
    "-c": Opt(FLAG, "none", "c"),
    "-x": Opt(JOS, "x", "x"),
    "-O": Opt(JOINED, "both", "O"),  # also matches "-O" itself (empty value = -O1)
    "-v": Opt(FLAG, "both", "v"),
    # no object or linked output from sources: run the real compiler untouched
    **_opts(FLAG, "both", "-E -S -fsyntax-only -emit-llvm -emit-ast --precompile -### --version "
                          "-version -dumpversion -dumpfullversion -dumpmachine -dumpspecs --help "
                          "-help --help-hidden", kind="stop"),
    **_opts(JOINED, "both", "-print- --print-", kind="stop"),
    **_opts(FLAG, "both", "-M -MM", kind="M"),
}

# Prefix-matchable options, longest first, so "-isystem" wins over "-i..." and "-MF" over "-M".
_JOINED = sorted((n for n, o in OPTIONS.items() if o.arity in (JOINED, JOS)), key=len,
                 reverse=True)

# Source languages by extension (case matters: .c is C, .C is C++; .s is asm, .S is asm-cpp).
EXT_LANG = {
    **dict.fromkeys(".c .i".split(), "c"),
    **dict.fromkeys(".cc .cpp .cxx .c++ .cp .C .CPP .CC .ii .cppm".split(), "c++"),
    **dict.fromkeys(".f .F .f77 .F77 .f90 .F90 .f95 .F95 .f03 .F03 .f08 .F08 .for .FOR .fpp .FPP "
                    ".ftn .FTN".split(), "fortran"),
    ".s": "asm", ".S": "asm-cpp", ".sx": "asm-cpp", ".ll": "ir",
    **dict.fromkeys(".m .mm .mi".split(), "objc"),
    ".cu": "cuda",
    ".h": "c-header",
    **dict.fromkeys(".hh .hpp .hxx .H .h++".split(), "c++-header"),
}

# -x LANG values; anything else is 'other'. 'ir' becomes 'bc' for a .bc file.
X_LANG = {
    "c": "c", "cpp-output": "c", "c++": "c++", "c++-cpp-output": "c++",
    "f95": "fortran", "f95-cpp-input": "fortran", "f77": "fortran", "f77-cpp-input": "fortran",
    "fortran": "fortran", "assembler": "asm", "assembler-with-cpp": "asm-cpp", "ir": "ir",
    "objective-c": "objc", "objective-c++": "objc", "cuda": "cuda",
    "c-header": "c-header", "c++-header": "c++-header", "objective-c-header": "c-header",
}
HEADERS = ("c-header", "c++-header")
ASM = ("asm", "asm-cpp")


@dataclass
class Source:
    index: int
    path: str
    lang: str
    preprocessed: bool = False     # (.i, .ii, -x cpp-output: includes are already in it)


@dataclass
class _Unit:
    """One argument as the driver sees it: an input, or an option with its value (1-2 tokens)."""
    start: int
    size: int
    keep: str  # an Opt.keep value, or 'source' / 'input'


@dataclass
class Invocation:
    action: str
    args: list[str]
    sources: list[Source] = field(default_factory=list)
    inputs: list[tuple[int, str]] = field(default_factory=list)
    libs: list[tuple[int, str]] = field(default_factory=list)
    lib_dirs: list[str] = field(default_factory=list)
    output: str | None = None
    opt_level: str = "0"
    shared: bool = False
    static: bool = False
    verbose: bool = False
    depfile_only: bool = False
    lang_override: list[tuple[int, str]] = field(default_factory=list)  # (index, LANG as written)
    _units: list[_Unit] = field(default_factory=list, init=False, repr=False, compare=False)

    def _tokens(self, u: _Unit) -> list[str]:
        return self.args[u.start:u.start + u.size]

    def compile_args(self, source: Source | None = None) -> list[str]:
        """The options a compile job of each source needs: no inputs, -o, -c or link-only options.

        An -x is kept only if a source follows it before the next -x. Given `source`, only the -x
        that governs that source is kept, so `compile_args(s) + ['-c', s.path]` compiles s right.
        """
        xs = [k for k, u in enumerate(self._units) if u.keep == "x"]
        if source is not None:
            governing = [k for k in xs if self._units[k].start < source.index][-1:]
        else:
            governing = [k for k in xs if self._x_precedes_source(k)]
        out: list[str] = []
        for k, u in enumerate(self._units):
            if u.keep in ("both", "compile") or k in governing:
                out += self._tokens(u)
        return out

    def link_options(self) -> list[str]:
        """The link-only options (-l, -L, -Wl, ...): a compile-only command (-c) gives them to
        clang all the same, which warns that they are unused (an error under -Werror)."""
        return [t for u in self._units if u.keep == "link" for t in self._tokens(u)]

    def _x_precedes_source(self, k: int) -> bool:
        for u in self._units[k + 1:]:
            if u.keep in ("x", "source"):
                return u.keep == "source"
        return False

    def link_args_with(self, replace: dict[int, list[str]]) -> list[str]:
        """The link command line: sources removed (or replaced by replace[index]), -c, -x and
        dependency-file options dropped, everything else in order. A replace key may name any
        argument's first token (an option with a separate value is replaced as a whole)."""
        out: list[str] = []
        for u in self._units:
            if u.start in replace:
                out += replace[u.start]
            elif u.keep in ("both", "link", "input"):
                out += self._tokens(u)
        return out


def expand_response_files(argv: list[str], _stack: tuple[str, ...] = ()) -> list[str]:
    """Replace each @file by its tokens, recursively. Nested names are relative to the current
    directory (as clang 22 and gcc do); a missing file stays a literal argument, as in clang."""
    out: list[str] = []
    for arg in argv:
        path = arg[1:]
        if not arg.startswith("@") or not os.path.isfile(path):
            out.append(arg)
            continue
        real = os.path.realpath(path)
        if real in _stack:
            raise UserError(f"recursive expansion of response file '{path}'")
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            out += expand_response_files(tokenize_gnu(f.read()), _stack + (real,))
    return out


def tokenize_gnu(text: str) -> list[str]:
    """Split like llvm::cl::TokenizeGNUCommandLine: whitespace separates; '...' and "..." quote;
    a backslash escapes the next character, inside quotes too."""
    tokens: list[str] = []
    tok: list[str] | None = None  # None between tokens, so '' (from "") is still a token
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            if tok is not None:
                tokens.append("".join(tok))
                tok = None
            i += 1
            continue
        tok = tok if tok is not None else []
        if c == "\\" and i + 1 < n:
            tok.append(text[i + 1])
            i += 2
        elif c in "'\"":
            i += 1
            while i < n and text[i] != c:
                if text[i] == "\\" and i + 1 < n:
                    i += 1
                tok.append(text[i])
                i += 1
            i += 1  # the closing quote
        else:
            tok.append(c)
            i += 1
    if tok is not None:
        tokens.append("".join(tok))
    return tokens


def _match(args: list[str], i: int) -> tuple[Opt | None, str | None, int]:
    """(option, value, tokens used) for the option at args[i]; unknown options: (None, None, 1)."""
    tok = args[i]
    opt = OPTIONS.get(tok)
    if opt is not None and opt.arity in (SEP, JOS):
        return opt, (args[i + 1] if i + 1 < len(args) else None), min(2, len(args) - i)
    if opt is not None:
        return opt, "" if opt.arity == JOINED else None, 1
    for name in _JOINED:
        if tok.startswith(name):
            return OPTIONS[name], tok[len(name):], 1
    return None, None, 1


def _opt_level(value: str) -> str:
    if value == "":
        return "1"  # clang: -O is -O1
    if value.isdigit():
        return str(min(int(value), 3))  # -O4 and above are -O3
    return value


def classify(argv: list[str], driver: str = "clang") -> Invocation:
    """Classify the arguments of a clang/clang++/flang command (argv without the program name).
    `driver` does not change the classification: Fortran extensions are Fortran with every driver
    and unknown extensions are linker inputs with every driver."""
    if driver not in ("clang", "clang++", "flang"):
        raise ValueError(f"unknown driver {driver!r}")
    args = expand_response_files(argv)
    inv = Invocation(action="link", args=args)
    kinds: set[str] = set()
    x_lang: str | None = None  # the active -x LANG, mapped
    x_pre = False              # ... and whether it names preprocessed source
    only_inputs = False  # after '--' every token is an input
    stdin_without_x = False
    i = 0
    while i < len(args):
        tok = args[i]
        if tok == "--" and not only_inputs:
            only_inputs = True
            inv._units.append(_Unit(i, 1, "link"))  # not for compile jobs: they append -c SRC
            i += 1
            continue
        if only_inputs or tok == "-" or not tok.startswith("-"):
            stdin_without_x |= _add_input(inv, i, tok, x_lang, x_pre if x_lang else None)
            i += 1
            continue
        opt, value, used = _match(args, i)
        inv._units.append(_Unit(i, used, opt.keep if opt else "both"))
        kind = opt.kind if opt else ""
        kinds.add(kind)
        if kind == "o":
            inv.output = value
        elif kind == "l" and value is not None:
            inv.libs.append((i, value))
        elif kind == "L" and value is not None:
            inv.lib_dirs.append(value)
        elif kind == "O":
            inv.opt_level = _opt_level(value or "")
        elif kind == "x" and value is not None:
            inv.lang_override.append((i, value))
            x_lang = None if value == "none" else X_LANG.get(value, "other")
            x_pre = value.endswith("cpp-output")
        elif kind in ("shared", "static"):
            setattr(inv, kind, True)
        inv.verbose |= kind == "v"
        inv.depfile_only |= kind == "M"
        i += used
    if "O" not in kinds:
        inv.opt_level = _lto_level(args) or inv.opt_level
    inv.action = _action(inv, kinds, stdin_without_x)
    return inv


_LTO_LEVEL = re.compile(r"(?:^|,)(?:-plugin-opt=O|--lto-O|-plugin-opt=-O)([0-3])(?:,|$)")


def _lto_level(args) -> str | None:
    """The LTO optimization level a link passes its linker when it gives no -O (rustc's
    `-Wl,-plugin-opt=O3` with -C linker-plugin-lto): the level of the link step's own
    optimization then, as the linker's LTO would use."""
    level = None
    for tok in args:
        if tok.startswith("-Wl,"):
            for m in _LTO_LEVEL.finditer(tok[4:]):
                level = m.group(1)
    return level


def _add_input(inv: Invocation, i: int, tok: str, x_lang: str | None,
               x_pre: bool | None = None) -> bool:
    """Record args[i] as a source (by -x or extension) or a linker input; True for '-' w/o -x."""
    ext = os.path.splitext(tok)[1]
    lang = x_lang or EXT_LANG.get(ext)
    if lang is None:
        inv.inputs.append((i, tok))
        inv._units.append(_Unit(i, 1, "input"))
        return tok == "-"
    pre = x_pre if x_pre is not None else ext in (".i", ".ii", ".mi")
    inv.sources.append(Source(i, tok, "bc" if lang == "ir" and tok.endswith(".bc") else lang,
                              pre))
    inv._units.append(_Unit(i, 1, "source"))
    return False


def _action(inv: Invocation, kinds: set[str], stdin_without_x: bool) -> str:
    langs = {s.lang for s in inv.sources}
    if kinds & {"stop", "M"} or stdin_without_x:  # clang reports '-' without -x itself
        return "passthrough"
    if not (inv.sources or inv.inputs or inv.libs):  # clang says 'no input files'
        return "passthrough"
    if langs & set(HEADERS):  # precompiled headers
        return "passthrough"
    if "c" in kinds:
        return "compile" if langs - set(ASM) else "passthrough"
    return "link"
