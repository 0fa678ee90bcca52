"""LLVM's scoped no-alias metadata (`!alias.scope`, `!noalias`): what inlining a function with
`restrict` (noalias) parameters leaves on its loads and stores. Two accesses do not alias when,
for some domain, the scopes of that domain in one's `!alias.scope` list all appear in the
other's `!noalias` list (LangRef, "noalias and alias.scope Metadata").

The fact holds within one execution of the inlined call only: where the call is inside a loop
of the caller, a load of one iteration and a store of the next are not covered (a time loop
swapping a kernel's `restrict` input and output). The inliner marks where each scope begins
with `llvm.experimental.noalias.scope.decl`; only scopes declared outside every cycle of the
function, one execution per call of it, are used."""
from __future__ import annotations

import re

from .cfg import cyclic_blocks

_DECL = "@llvm.experimental.noalias.scope.decl"
_REFS = re.compile(r"![0-9]+")


def _scopes(module, list_ref: str | None) -> dict:
    """domain -> the scopes of that domain in the scope list `list_ref`."""
    memo = module.__dict__.setdefault("_scope_lists", {})
    if list_ref not in memo:
        out: dict = {}
        for scope in _REFS.findall(module.metadata.get(list_ref or "", "")):
            parts = _REFS.findall(module.metadata.get(scope, ""))
            if len(parts) >= 2:             # !{self, domain, name?}
                out.setdefault(parts[1], set()).add(scope)
        memo[list_ref] = out
    return memo[list_ref]


def once_per_call(module, fn) -> set:
    """The scopes fn declares outside every cycle: each begins once per call of fn."""
    if "_once_scopes" not in fn.__dict__:
        cyclic, out = None, set()
        for inst in fn.insts():
            if inst.op == "call" and inst.callee == _DECL:
                cyclic = cyclic_blocks(fn) if cyclic is None else cyclic
                if inst.block.label not in cyclic:
                    for lst in _REFS.findall(" ".join(inst.toks)):
                        for ss in _scopes(module, lst).values():
                            out |= ss
        fn._once_scopes = out
    return fn._once_scopes


def _covered(module, a, b, once) -> bool:
    """a's alias.scope scopes of some domain all lie in b's noalias list, each declared once
    per call."""
    mine = _scopes(module, a.md.get("!alias.scope"))
    theirs = _scopes(module, b.md.get("!noalias"))
    return any(ss and ss <= theirs.get(dom, set()) and ss <= once for dom, ss in mine.items())


def scoped_disjoint(module, fn, a, b) -> bool:
    """Memory accesses a and b of fn do not alias by their scoped no-alias metadata, in any one
    call of fn."""
    if not getattr(a, "md", None) or not getattr(b, "md", None):
        return False
    once = once_per_call(module, fn)
    return bool(once) and (_covered(module, a, b, once) or _covered(module, b, a, once))
