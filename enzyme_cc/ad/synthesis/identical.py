"""Local functions with the same code, merged into one after AD (lto/ad_pipeline.py).

The generator makes a derivative per request key, and keys that differ (pointer hints, the
kind of a split pair, an activity signature it widens) can give the same code: the Fortran
runtime's derived-type deep copy in `tests/libraries/fortran_*.f90` comes out in 30 groups of
identical augmented, reverse and forward functions, 37 % of the derivative module's lines, each
then optimized and compiled again. Here every generated function whose text equals an earlier
one's (its own name and its source locations aside) is dropped, and what named it names the
earlier one; repeated, since a merge can make two callers equal. The program's own functions
are left alone: C gives distinct functions distinct addresses. LLVM's MergeFunctions does this
on the IR, after paying for parsing what this drops.
"""
from __future__ import annotations

import hashlib
import re

from ..structure.diagnostics import generated_primal

_NAME = r'(?:"[^"]*"|[-\w$.]+)'
_FUNCTION = re.compile(rf"^define (?:internal|private) [^\n]*?@({_NAME})\([^\n]*\n(?:[^\n]*\n)*?\}}\n",
                       re.M)
_REF = re.compile(rf"@({_NAME})")
_LOCATION = re.compile(r",? !dbg ![0-9]+")


def merge(text: str) -> tuple[str, int]:
    """`text` with its identical local functions merged: (text, how many were dropped)."""
    dropped = 0
    while True:
        first: dict[bytes, str] = {}
        same: dict[str, str] = {}            # a function -> the earlier one it equals
        spans = []
        for m in _FUNCTION.finditer(text):
            name = m.group(1)
            if generated_primal(name.strip('"')) is None:
                continue            # (a program's own functions keep addresses of their own)
            body = m.group(0)
            key = hashlib.sha1(_LOCATION.sub("", body.replace(f"@{name}(", "@(")).encode()).digest()
            if key in first:
                same[name] = first[key]
                spans.append((m.start(), m.end()))
            else:
                first[key] = name
        if not same:
            return text, dropped
        dropped += len(same)
        kept, at = [], 0
        for start, end in spans:
            kept.append(text[at:start])
            at = end
        kept.append(text[at:])
        text = _REF.sub(lambda m: "@" + same.get(m.group(1), m.group(1)), "".join(kept))
