"""Inline assembly with a plain IR equivalent, rewritten before the pre-AD optimization so that
AD (and LLVM) see ordinary instructions. Eigen computes the element-wise max and min of SSE
packets with `asm("maxpd %1, %0" : "+x"(res) : "x"(a))` (pmax/pmin in its SSE PacketMath.h,
reached by ColPivHouseholderQR, JacobiSVD, BDCSVD...), and with FMA (-march=native) its AVX
pmadd is `asm("vfmadd231pd %[a], %[b], %[c]" : [c] "+x"(res) : ...)` (every matrix product);
AD cannot differentiate assembly.

VFMADD231P[SD] a, b, c (AT&T order) computes c = a * b + c with one rounding: `llvm.fma(a, b,
c)`, where the IR call passes a, b and then c, tied to the result (constraint `0`).

x86's MAXPD/MINPD/MAXPS/MINPS dst, src give per lane `dst > src ? dst : src` (`<` for min),
returning src when either is NaN or both are zeros: exactly `select (fcmp ogt dst, src), dst,
src`. In the IR the call's first argument is the source (`$1`), the second the destination tied
to the result (constraint `0`). The AVX form `vmaxpd $1, $2, $0` (Eigen's AVX pmax/pmin) is
MAXPD with $2 as the destination operand and $1 as the source: the same select, with the
call's second argument in the destination's place."""
from __future__ import annotations

import re

from enzyme_cc.ir.inst import FAST_MATH_FLAGS_RE

# `%res = [tail] call [fast-math flags] [noundef]`, the line's indent kept (-ffast-math
# puts its flags on a call returning floats, asm too)
_HEAD = (r'^(?P<ind>[ \t]*)(?P<res>%[-\w.$]+) = (?:tail |musttail |notail )?call '
         + FAST_MATH_FLAGS_RE + r'(?:noundef )?')

_MINMAX = re.compile(
    _HEAD +
    r'(?P<ty><(?P<n>\d+) x (?:double|float)>) asm "(?P<op>max|min)p[sd] \$1, \$0", '
    r'"=x,x,0(?:,~\{[a-z]+\})*"\((?P=ty) (?P<src>%[-\w.$]+), (?P=ty) (?P<dst>%[-\w.$]+)\)'
    r'[^\n]*$', re.M)


_MINMAX3 = re.compile(
    _HEAD +
    r'(?P<ty><(?P<n>\d+) x (?:double|float)>) asm "v(?P<op>max|min)p[sd] \$1, \$2, \$0", '
    r'"=x,x,x(?:,~\{[a-z]+\})*"\((?P=ty) (?P<src>%[-\w.$]+), (?P=ty) (?P<dst>%[-\w.$]+)\)'
    r'[^\n]*$', re.M)


def _select(m) -> str:
    ind, res, ty, n = m["ind"], m["res"], m["ty"], m["n"]
    pred = "ogt" if m["op"] == "max" else "olt"
    cmp = "%asm.cmp." + res[1:].strip('"')      # (a numbered result: %12 -> %asm.cmp.12)
    return (f"{ind}{cmp} = fcmp {pred} {ty} {m['dst']}, {m['src']}\n"
            f"{ind}{res} = select <{n} x i1> {cmp}, {ty} {m['dst']}, {ty} {m['src']}")


_FMA = re.compile(
    _HEAD +
    r'(?P<ty><(?P<n>\d+) x (?P<el>double|float)>) asm "vfmadd231p[sd] \$1, \$2, \$0", '
    r'"=x,x,x,0(?:,~\{[a-z]+\})*"\((?P=ty) (?P<a>%[-\w.$]+), (?P=ty) (?P<b>%[-\w.$]+), '
    r'(?P=ty) (?P<c>%[-\w.$]+)\)[^\n]*$', re.M)


def _fma_name(m) -> str:
    return f"@llvm.fma.v{m['n']}f{64 if m['el'] == 'double' else 32}"


def _fma(m) -> str:
    ty = m["ty"]
    return (f"{m['ind']}{m['res']} = call {ty} {_fma_name(m)}({ty} {m['a']}, {ty} {m['b']}, "
            f"{ty} {m['c']})")


def rewrite(text: str) -> str:
    """The module with each SSE max/min inline assembly call replaced by a compare and a
    select, and each FMA one by llvm.fma (the same result on every input)."""
    if ' asm "m' in text:
        text = _MINMAX.sub(_select, text)
    if ' asm "vm' in text:
        text = _MINMAX3.sub(_select, text)
    if ' asm "vfmadd231p' in text:
        used = {(m["ty"], _fma_name(m)) for m in _FMA.finditer(text)}
        text = _FMA.sub(_fma, text)
        for ty, name in sorted(used):
            if f"declare {ty} {name}(" not in text:
                text += f"\ndeclare {ty} {name}({ty}, {ty}, {ty})\n"
    return text
