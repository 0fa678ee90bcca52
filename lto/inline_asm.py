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

import math
import re
import struct

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


# Eigen's EIGEN_OPTIMIZATION_BARRIER(x), `asm("" : "+g,x"(x))`: an identity LLVM may not see
# through. clang passes x in memory: `call void asm "", "=*imr|x,0,..."(ptr elementtype(T) %p,
# T %v)` leaves v at p. Its SSE2 rounding (pfloor, print, the octant of float sin/cos) is
# `r = a + C` behind the barrier, then `r - C`, with C = 2^23 or 2^52 (or 1.5 times that: both
# signs): `a + C` rounds a to an integer in the current (nearest-even) mode, the same as
# `rint(a) + C`, whose derivative is zero as a rounding's must be (the barrier taken as an
# identity, the floor would carry a derivative of 1: Eigen's exp and log wrong). Elsewhere (the
# float sine's reduction steps) the barrier is the identity.
_BARRIER = re.compile(
    r'^(?P<ind>[ \t]*)call void asm (?:sideeffect )?"", "=\*[^",]*,0(?:,~\{[a-z]+\})*"'
    r'\(ptr (?:nonnull )?(?:align \d+ )?elementtype\((?P<ty>[^()]+)\) (?P<p>%[-\w.$]+), '
    r'(?P=ty) (?P<v>%[-\w.$]+)\)[^\n]*$', re.M)
_MAGIC = {2.0 ** 23, 2.0 ** 52}
_MAGIC_SIGNED = {1.5 * 2.0 ** 23, 1.5 * 2.0 ** 52}
_FLOAT_CONST = r'(?:splat \((?:double|float) (?P<c>[-+0-9.eE]+|0x[0-9A-Fa-f]{16})\)|' \
               r'(?P<s>[-+0-9.eE]+|0x[0-9A-Fa-f]{16}))'


def _const_value(text: str) -> float | None:
    m = re.fullmatch(_FLOAT_CONST, text.strip())
    if not m:
        return None
    c = m["c"] or m["s"]
    if c.startswith("0x"):
        return struct.unpack("<d", int(c, 16).to_bytes(8, "little"))[0]
    try:
        return float(c)
    except ValueError:
        return None


def _rounding_constant(v: float | None) -> bool:
    """A constant whose addition rounds: 2^k or 1.5 * 2^k, k >= 20 (either sign)."""
    if v is None or v == 0 or math.isinf(v) or math.isnan(v):
        return False
    m, e = math.frexp(abs(v))         # |v| = m * 2^e, 0.5 <= m < 1
    return e > 20 and m in (0.5, 0.75)


def _rint_name(ty: str) -> str:
    m = re.fullmatch(r"<(\d+) x (double|float)>", ty)
    el = (m[2] if m else ty)
    suffix = "f64" if el == "double" else "f32"
    return f"@llvm.rint.{'v' + m[1] if m else ''}{suffix}"


def barriers(text: str) -> str:
    """Eigen's optimization barriers replaced by what they keep, on the module after the pre-AD
    optimization (where the barrier's value is the addition itself, not a load of it)."""
    if 'asm "", "=*' not in text and 'asm sideeffect "", "=*' not in text:
        return text
    used, n = set(), [0]

    def one(m):
        ind, ty, p, v = m["ind"], m["ty"], m["p"], m["v"]
        body = m.string[m.string.rfind("\ndefine ", 0, m.start()):m.start()]
        defs = list(re.finditer(rf'^\s*{re.escape(v)} = (?P<op>[a-z]+) [^\n]*$', body, re.M))
        if not defs or ty.split()[-1].rstrip(">") not in ("double", "float"):
            return m[0]     # (not a value computed here: kept, and refused if AD reaches it)
        d = defs[-1]
        add = re.fullmatch(rf'\s*{re.escape(v)} = fadd (?:[a-z]+ )*{re.escape(ty)} '
                           r'(?P<a>[^,\n]+(?:\([^)\n]*\))?), (?P<b>[^,!\n]+(?:\([^)\n]*\))?)'
                           r'(?:,[^\n]*)?', d[0])
        if add:
            a, b = add["a"].strip(), add["b"].strip()
            for x, c in ((a, b), (b, a)):
                # (2^52 + a rounds a only where a >= 0: Eigen's print takes |a|; 1.5 * 2^52
                # rounds either sign)
                if x.startswith("%") and (_const_value(c) in _MAGIC_SIGNED or (
                        _const_value(c) in _MAGIC and re.search(
                            rf'^\s*{re.escape(x)} = [^\n]*@llvm\.fabs\.', body, re.M))):
                    n[0] += 1
                    used.add((ty, _rint_name(ty)))
                    r, s = f"%asm.rint.{n[0]}", f"%asm.round.{n[0]}"
                    return (f"{ind}{r} = call {ty} {_rint_name(ty)}({ty} {x})\n"
                            f"{ind}{s} = fadd {ty} {r}, {c}\n"
                            f"{ind}store {ty} {s}, ptr {p}")
            if any(_rounding_constant(_const_value(c)) for c in (a, b)):
                return m[0]     # (another rounding by addition: kept, and refused)
        if d["op"] in ("fadd", "fsub", "fmul", "fdiv", "fneg", "call", "select"):
            return f"{ind}store {ty} {v}, ptr {p}"     # (arithmetic kept in order: the value)
        return m[0]

    text = _BARRIER.sub(one, text)
    for ty, name in sorted(used):
        if f"declare {ty} {name}(" not in text:
            text += f"\ndeclare {ty} {name}({ty})\n"
    return text


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
