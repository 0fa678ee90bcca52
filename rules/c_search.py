"""bsearch's body (rules/c_search.c) linked into a merged module that calls the C library's and
defines none: glibc gives its inline body only when not optimizing for size, and a bsearch
without code returns a pointer into the data without its shadow (refused)."""
from __future__ import annotations

import re

from .c_runtime import runtime_bitcode
from enzyme_cc.lto.optimize import parse_bitcode, parse_text

_CALLS = re.compile(r"\b(?:call|invoke)\b[^\n]*@bsearch\(")
_DEFINED = re.compile(r"^define [^\n]*@bsearch\(", re.M)
_OURS = re.compile(r"^define [^@\n]*@bsearch\(", re.M)


def link_runtime(module, text: str, ctx) -> bool:
    """Links the body where `text` (the module's) calls bsearch; True when it did."""
    if "@bsearch(" not in text or not _CALLS.search(text) or _DEFINED.search(text):
        return False
    for data in runtime_bitcode(("c_search.c",), (), "bsearch"):
        ours = str(parse_bitcode(data, "enzyme-cc bsearch", ctx))
        ours = _OURS.sub("define available_externally ptr @bsearch(", ours, count=1)
        module.link_in(parse_text(ours, ctx, "enzyme-cc bsearch"))
    return True
