"""Inline assembly with a plain IR equivalent, rewritten before the pre-AD optimization so that
AD (and LLVM) see ordinary instructions. Eigen computes the element-wise max and min of SSE
packets with `asm("maxpd %1, %0" : "+x"(res) : "x"(a))` (pmax/pmin in its SSE PacketMath.h,
reached by ColPivHouseholderQR, JacobiSVD, BDCSVD...); AD cannot differentiate assembly.

x86's MAXPD/MINPD/MAXPS/MINPS dst, src give per lane `dst > src ? dst : src` (`<` for min),
returning src when either is NaN or both are zeros: exactly `select (fcmp ogt dst, src), dst,
src`. In the IR the call's first argument is the source (`$1`), the second the destination tied
to the result (constraint `0`)."""
from __future__ import annotations

import re

_MINMAX = re.compile(
    r'^(?P<ind>[ \t]*)(?P<res>%[-\w.$]+) = (?:tail |musttail |notail )?call (?:noundef )?'
    r'(?P<ty><(?P<n>\d+) x (?:double|float)>) asm "(?P<op>max|min)p[sd] \$1, \$0", '
    r'"=x,x,0(?:,~\{[a-z]+\})*"\((?P=ty) (?P<src>%[-\w.$]+), (?P=ty) (?P<dst>%[-\w.$]+)\)'
    r'[^\n]*$', re.M)


def _select(m) -> str:
    ind, res, ty, n = m["ind"], m["res"], m["ty"], m["n"]
    pred = "ogt" if m["op"] == "max" else "olt"
    cmp = "%asm.cmp." + res[1:].strip('"')      # (a numbered result: %12 -> %asm.cmp.12)
    return (f"{ind}{cmp} = fcmp {pred} {ty} {m['dst']}, {m['src']}\n"
            f"{ind}{res} = select <{n} x i1> {cmp}, {ty} {m['dst']}, {ty} {m['src']}")


def rewrite(text: str) -> str:
    """The module with each SSE max/min inline assembly call replaced by a compare and a
    select (the same result on every input)."""
    if ' asm "m' not in text:
        return text
    return _MINMAX.sub(_select, text)
