"""enzyme-cc's runtimes written in C (rules/mpi_*.c, rules/fortran_runtime.c): compiled to
bitcode by the toolchain's clang once, cached by their text and the compiler, for linking into a
program's module."""
from __future__ import annotations

import hashlib
import os
import re
import tempfile

import llvmlite.binding as llvm

from enzyme_cc import toolchain
from enzyme_cc.cache import cache_root
from enzyme_cc.compile import run
from enzyme_cc.errors import UserError
from enzyme_cc.lto.optimize import parse_bitcode

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


# a global named in IR text (the runtimes are C: no quoted names)
_NAMED = re.compile(r"@([\w.$]+)")


def _references(text: str, variables: set[str]) -> dict[str, set[str]]:
    """Each global that module `text` defines (a function or a variable) -> the globals its
    definition names; the variables' names are added to `variables`."""
    refs: dict[str, set[str]] = {}
    body = None
    for line in text.split("\n"):
        if body is not None:
            if line == "}":
                body = None
            else:
                body |= set(_NAMED.findall(line))
        elif line.startswith("define "):
            m = _NAMED.search(line)
            body = refs.setdefault(m.group(1), set())
            body |= set(_NAMED.findall(line[m.end():]))     # (personality, prefix data)
        elif line.startswith("@") and " = " in line:
            name, rest = line[1:].split(" = ", 1)
            if not rest.startswith(("external ", "extern_weak ")):
                refs[name] = set(_NAMED.findall(rest))
                variables.add(name)
    return refs


def link_needed(module, ctx, sources: tuple, headers: tuple, what: str, program_text: str,
                roots: set[str] = frozenset()):
    """Link the runtime of `sources` (runtime_bitcode's arguments) into `module` (in context
    `ctx`), keeping defined for the link only what the program's code uses: the runtime globals its text
    names (with `roots`, the names later rewrites introduce), what they name in turn, and the
    variables naming any of those (Enzyme's registrations of their derivatives, which name
    the derivatives in turn). The others become internal, so that the pre-AD pipeline drops
    them: the whole Fortran runtime is about 1 MB of IR text, and carried through AD it made a
    small Fortran program's link last 12 s instead of 2 s (docs/performance.md)."""
    modules = [parse_bitcode(data, f"enzyme-cc {what}", ctx)
               for data in runtime_bitcode(sources, headers, what)]
    refs: dict[str, set[str]] = {}
    variables: set[str] = set()
    for m in modules:
        refs.update(_references(str(m), variables))
    needed: set[str] = set()
    todo = [n for n in refs if n in roots or f"@{n}" in program_text and
            re.search(rf"@{re.escape(n)}(?![\w.$])", program_text)]
    while todo:
        while todo:
            n = todo.pop()
            if n in refs and n not in needed:
                needed.add(n)
                todo += refs[n]
        todo = [n for n in variables if n not in needed and refs[n] & needed]
    for m in modules:
        module.link_in(m)
    for g in list(module.functions) + list(module.global_variables):
        if g.name in refs and g.name not in needed and g.linkage == llvm.Linkage.external \
                and not g.is_declaration:
            g.linkage = llvm.Linkage.internal
