"""The linker's options on symbols (`--wrap=g`, `--defsym=g=h`, `--allow-multiple-definition`),
read from a link's command line and applied to each bitcode module before the merge
(lto/optimize.py `merge`), as ld applies them to the objects."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from enzyme_cc.driver_args import expand_response_files
from enzyme_cc.errors import UserError


@dataclass
class LinkerSymbols:
    """The linker's options on symbols that the merge applies to the bitcode, as ld would to
    the objects: `--wrap=g`, `--defsym=g=h` (a symbol's alias; an expression is left to ld),
    `--allow-multiple-definition` / `-z muldefs` (the first definition wins)."""
    wraps: list = field(default_factory=list)
    aliases: list = field(default_factory=list)      # [(symbol, target symbol)]
    muldefs: bool = False

    def key(self):
        return (self.wraps, self.aliases, self.muldefs)

    def apply(self, module, merged, origin: str):
        """This module's references as the options resolve them (merged: the modules merged
        before it, or None)."""
        for sym in self.wraps:
            wrap_references(module, sym, origin)
        for sym, target in self.aliases:
            _rename_declaration(module, sym, target, origin, f"--defsym={sym}={target}")
        if self.muldefs and merged is not None:
            _keep_first_definitions(merged, module)


_SYMBOL = re.compile(r"[A-Za-z_.$][\w.$]*$")


def linker_options(args) -> list[tuple[int, str]]:
    """(argument position, option) of each option a command line gives the linker (`-Wl,a,b`,
    `-Xlinker a`), with the linker's own response files (`-Wl,@link.rsp`, which ld reads
    itself, as build systems write long link lines) expanded."""
    out = []
    for i, t in enumerate(args):
        opts = t[4:].split(",") if t.startswith("-Wl,") else \
            [t] if i and args[i - 1] == "-Xlinker" else []
        out += [(i, o) for o in expand_response_files(opts)]
    return out


def linker_symbols(args) -> LinkerSymbols:
    """LinkerSymbols of a command line (`-Wl,--wrap=g`, `-Wl,-wrap,g`, `-Xlinker --wrap=g`,
    `-Xlinker --wrap -Xlinker g`, `-Wl,@file` holding them, and the same forms of the others)."""
    opts = [o for _, o in linker_options(args)]
    out = LinkerSymbols()
    for k, o in enumerate(opts):
        nxt = opts[k + 1] if k + 1 < len(opts) else ""
        name, eq, value = o.partition("=")
        if name in ("--wrap", "-wrap"):
            out.wraps.append(value if eq else nxt)
        elif name in ("--defsym", "-defsym"):
            sym, _, target = (o[len(name) + 1:] if eq else nxt).partition("=")
            if _SYMBOL.match(target.strip()):
                out.aliases.append((sym.strip(), target.strip()))
        elif o in ("--allow-multiple-definition", "-allow-multiple-definition") or \
                o == "-z" and nxt == "muldefs" or o == "-zmuldefs":
            out.muldefs = True
    return out


def _rename_declaration(module, old: str, new: str, origin: str, option: str):
    """A reference the module does not define goes to another symbol (--defsym=old=new)."""
    try:
        fn = module.get_function(old)
    except NameError:
        return
    if fn.is_declaration:
        fn.name = new
        if fn.name != new:
            raise UserError(f"{origin}: cannot apply {option}: it names both '{old}' and "
                            f"'{new}' without defining them; hint: call '{new}' directly")


def _keep_first_definitions(main, other):
    """--allow-multiple-definition (-z muldefs): a function the merged modules define already
    keeps that first definition, as the linker takes the first one; the later module's becomes
    a weak one that the merge drops."""
    for fn in other.functions:
        if fn.is_declaration or fn.linkage.name not in ("external",):
            continue
        try:
            first = main.get_function(fn.name)
        except NameError:
            continue
        if not first.is_declaration:
            fn.linkage = "weak_any"


def wrap_references(module, sym: str, origin: str):
    """The linker's `--wrap=sym` in one module, before the merge: a reference to `sym` that the
    module does not define goes to `__wrap_sym`, one to `__real_sym` to `sym` (as ld resolves
    undefined references; a module's own calls of its definition stay)."""
    renames = []
    for old, new in ((sym, "__wrap_" + sym), ("__real_" + sym, sym)):
        try:
            fn = module.get_function(old)
        except NameError:
            if any(g.name == old for g in module.global_variables):
                raise UserError(f"{origin}: --wrap={sym} of a variable is not supported by "
                                "enzyme-cc's link; hint: wrap functions only") from None
            continue
        if fn.is_declaration:
            renames.append((fn, new))
    for fn, new in renames:
        fn.name = "__enzyme_cc_wrapping." + new       # (both may be renamed: no clash between)
    for fn, new in renames:
        fn.name = new
        if fn.name != new:
            raise UserError(f"{origin}: cannot apply --wrap={sym}: it names both '{sym}' and "
                            f"'__wrap_{sym}' (or '__real_{sym}' and '{sym}') without defining "
                            "them; hint: keep the wrapper and its callers in separate files")
