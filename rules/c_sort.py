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


def link_runtime(module, text: str, ctx) -> bool:
    """Links the runtime where `text` (the module's) calls qsort; True when it did."""
    if not _CALLS.search(text) or _OWN.search(text) or _DEFINED.search(text):
        return False        # (a qsort of the program's own is differentiated as its code)
    for data in runtime_bitcode(("c_sort.c",), (), "qsort derivatives"):
        module.link_in(parse_bitcode(data, "enzyme-cc qsort derivatives", ctx))
    return True
