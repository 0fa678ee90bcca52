"""A float's exponent field set to a constant on its bits, rewritten as a scaling of the float
(a mixin of float_bits' rewriter).

frexp done on the bits (Eigen's vectorized log, log1p and expm1 through pfrexp, hand-written
fast logs) keeps the sign and mantissa of x and sets the exponent field to a constant E0:
`m = (bits(x) & (sign|mantissa)) | E0 << mbits`. Integer code loses m's derivative; as floats,
m is x * 2^(E0 - E) for a normal x whose exponent field is E, and
copysign(2^(E0 - bias), x) + x * 2^(E0 - 1) for a subnormal x (E = 0), both exact. The rewrite
reads E from the bits (an integer, piecewise constant in x), scales with llvm.ldexp, and keeps
the original bits where x is infinite or NaN: m is then not a function of x's value, and no
derivative there has a meaning. That one bitcast is named with NONFINITE so that the synthesis's
check of integer code on float bits (integer_checks) lets it through."""
from __future__ import annotations

import struct

NONFINITE = "%ad.nonfinite."
# integer width -> (float type, mantissa bits, all-ones exponent field, exponent bias)
_FORMATS = {32: ("float", 23, 255, 127), 64: ("double", 52, 2047, 1023)}


def _one(lanes) -> int | None:
    """The value every defined lane holds, or None."""
    vals = {v for v in lanes if v is not None}
    return vals.pop() if len(vals) == 1 else None


def _const(n: int | None, el: str, text: str) -> str:
    return f"splat ({el} {text})" if n else text


def _suffix(n: int | None, el: str) -> str:
    """An intrinsic's overload suffix: f32, v4f32, i32, v2i32."""
    short = {"float": "f32", "double": "f64"}.get(el, el)
    return f"v{n}{short}" if n else short


def is_frexp_mask(lanes, bits: int) -> bool:
    """The constant lanes of an `and` keep a float's mantissa (and maybe its sign) only."""
    fmt, keep = _FORMATS.get(bits), _one(lanes)
    if fmt is None or keep is None:
        return False
    field, sign = (1 << fmt[1]) - 1, 1 << (bits - 1)
    return keep in (field, field | sign)


class FrexpBits:
    """Needs from its host: view, fractions (a dict), tmp() and _as_bits() (float_bits'
    _Rewriter)."""

    def frexp_mask(self, inst, lanes, bits: int) -> bool:
        """`and` of a float's bits with its sign and mantissa (or its mantissa): remembered for
        the `or` that sets the exponent."""
        if not is_frexp_mask(lanes, bits):
            return False
        keep, sign = _one(lanes), 1 << (bits - 1)
        x = inst.ops[0] if inst.ops[0].is_local else inst.ops[1]
        self.fractions[inst.name] = (x.value, bool(keep & sign))
        return True

    def frexp_exponent(self, inst, fty: str, n: int | None, lanes, bits: int):
        """`or` of a remembered mask with a constant exponent field: the float computation (the
        module docstring), or None when the pattern does not match."""
        x, c = inst.ops if inst.ops[0].is_local else inst.ops[::-1]
        rec = self.fractions.get(x.value)
        fmt, set_bits = _FORMATS.get(bits), _one(lanes)
        if rec is None or fmt is None or set_bits is None or any(v is None for v in lanes):
            return None
        el, mbits, emax, bias = fmt
        e0 = set_bits >> mbits
        if set_bits != e0 << mbits or not 0 < e0 < emax:
            return None
        src_bits, keeps_sign = rec
        f = self.view.get(src_bits)
        if f is None:
            return None
        ity = inst.ty
        ielt = f"i{bits}"
        bty = f"<{n} x i1>" if n else "i1"
        i32 = f"<{n} x i32>" if n else "i32"
        fs, i32s = _suffix(n, el), _suffix(n, "i32")
        t = {k: self.tmp() for k in ("e0", "e", "sub", "nf", "e1", "k", "k32", "src", "s", "c",
                                     "sc", "fin", "raw", "res")}
        nonfinite = NONFINITE + t["raw"][len("%ad.fb."):]
        scale = "0x%016X" % struct.unpack(">Q", struct.pack(">d", 2.0 ** (e0 - bias)))[0]
        lines = [
            f"{t['e0']} = lshr {ity} {src_bits}, {_const(n, ielt, str(mbits))}",
            f"{t['e']} = and {ity} {t['e0']}, {_const(n, ielt, str(emax))}",
            f"{t['sub']} = icmp eq {ity} {t['e']}, {_const(n, ielt, '0')}",
            f"{t['nf']} = icmp eq {ity} {t['e']}, {_const(n, ielt, str(emax))}",
            f"{t['e1']} = select {bty} {t['sub']}, {ity} {_const(n, ielt, '1')}, {ity} {t['e']}",
            f"{t['k']} = sub {ity} {_const(n, ielt, str(e0))}, {t['e1']}",
        ]
        k32 = t["k"]
        if bits != 32:
            k32 = t["k32"]
            lines.append(f"{k32} = trunc {ity} {t['k']} to {i32}")
        src = f
        if not keeps_sign:
            src = t["src"]
            lines.append(f"{src} = call {fty} @llvm.fabs.{fs}({fty} {f})")
        lines += [
            f"{t['s']} = call {fty} @llvm.ldexp.{fs}.{i32s}({fty} {src}, {i32} {k32})",
            f"{t['c']} = call {fty} @llvm.copysign.{fs}({fty} {_const(n, el, scale)}, "
            f"{fty} {src})",
            f"{t['sc']} = fadd {fty} {t['s']}, {t['c']}",
            f"{t['fin']} = select {bty} {t['sub']}, {fty} {t['sc']}, {fty} {t['s']}",
            f"{t['raw']} = or {ity} {x.value}, {c.value}",
            f"{nonfinite} = bitcast {ity} {t['raw']} to {fty}",
            f"{t['res']} = select {bty} {t['nf']}, {fty} {nonfinite}, {fty} {t['fin']}",
        ]
        return self._as_bits(inst, fty, lines, t["res"])
