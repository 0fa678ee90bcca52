"""qsort's derivatives (rules/c_sort.c, registered as custom ones) linked into a merged module
that calls the C library's qsort or qsort_r (it defines neither) and registers none of its own
for them."""
from __future__ import annotations

import re

from .c_runtime import runtime_bitcode
from enzyme_cc.lto.optimize import parse_bitcode

# forward derivatives of ours that make the call's effect themselves (a sort's order is known
# only from the unsorted data): the primal call is left out
FORWARD_DOES_PRIMAL = ("@__enzyme_cc_qsort_fwd", "@__enzyme_cc_qsort_r_fwd")
_CALLS = re.compile(r"\b(?:call|invoke)\b[^\n]*@qsort(?:_r)?\(")
_DEFINED = re.compile(r"^define [^\n]*@qsort(?:_r)?\(", re.M)
_OWN = re.compile(r"^@\"?__enzyme_register_(?:gradient|derivative)\w*\"? = [^\n]*@qsort(?:_r)?\b",
                  re.M)


def _order(inst) -> str:
    return f"%ad.sortorder.{inst.line}"


def sort_once(ctx, inst) -> None:
    """Vector forward mode: sorts the array once (qsort's or qsort_r's comparator), keeping its
    order for each lane's shadow (sort_lane)."""
    val = [ctx.p(o.value) if o.is_local else o.value for o in inst.ops]
    base, n, size, cmp = val[:4]
    cmps = f"ptr {cmp}, ptr null, ptr null" if len(val) == 4 else \
        f"ptr null, ptr {cmp}, ptr {val[4]}"
    ctx.emit(f"{_order(inst)} = call ptr @__enzyme_cc_sort_order(ptr {base}, i64 {n}, i64 {size}, "
             f"{cmps})")


def sort_lane(ctx, inst) -> None:
    """The current lane's shadow put in the order sort_once kept (freed after the last lane)."""
    base, n, size = inst.ops[:3]
    if ctx.shadowed(base.value):
        nv, sv = (ctx.p(o.value) if o.is_local else o.value for o in (n, size))
        ctx.emit(f"call void @__enzyme_cc_sort_apply(ptr {ctx.s(base.value)}, i64 {nv}, "
                 f"i64 {sv}, ptr {_order(inst)})")
    if ctx.synth.lane == ctx.synth.width - 1:
        ctx.gen().declare_raw("@free", "declare void @free(ptr)")
        ctx.emit(f"call void @free(ptr {_order(inst)})")


def link_runtime(module, text: str, ctx) -> bool:
    """Links the runtime where `text` (the module's) calls qsort; True when it did."""
    if "@qsort" not in text or not _CALLS.search(text) or _OWN.search(text) or \
            _DEFINED.search(text):
        return False        # (a qsort of the program's own is differentiated as its code)
    for data in runtime_bitcode(("c_sort.c",), (), "qsort derivatives"):
        module.link_in(parse_bitcode(data, "enzyme-cc qsort derivatives", ctx))
    return True
