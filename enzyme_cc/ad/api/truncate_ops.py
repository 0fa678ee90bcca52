"""What a truncated operation is made of (ad/api/truncate.py): the formats, the libm functions and
LLVM intrinsics computed in the target format, constants read and written in a format, and
`_Body`, which emits the instructions of one truncated operation."""
from __future__ import annotations

import math
import re
import struct
from fractions import Fraction

from enzyme_cc.ir.lexer import join, scalar_of, tokenize

IEEE = {16: (5, 10), 32: (8, 23), 64: (11, 52)}
# formats computed inline (Enzyme's own widths); bfloat (8, 7) goes through the runtime like
# any other: Debian's libgcc has no bfloat conversions (__truncdfbf2) for the code LLVM emits
NATIVE = {(11, 52): "double", (8, 23): "float", (5, 10): "half"}
_SUFFIX = {"double": "f64", "float": "f32", "half": "f16"}
MEM, OP = 1, 2
# libm functions (double names; float ones add 'f') and LLVM intrinsics computed in the target
LIBM = {"sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
        "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf",
        "erfc", "tgamma", "lgamma", "fabs", "floor", "ceil", "trunc", "round", "rint",
        "nearbyint", "pow", "atan2", "hypot", "fmod", "remainder", "copysign", "fmin", "fmax",
        "fdim"}
INTRINSICS = {"sqrt", "pow", "powi", "fma", "fmuladd", "sin", "cos", "tan", "exp", "exp2", "log",
              "log2", "log10", "fabs", "floor", "ceil", "trunc", "round", "rint", "nearbyint",
              "copysign", "minnum", "maxnum"}
_BINOPS = ("fadd", "fsub", "fmul", "fdiv", "frem")


def _ieee_bits(x: float, e: int, s: int) -> int:
    """Bits of x rounded to nearest-even in the IEEE-style format (e, s) (subnormals, overflow
    to infinity): how mem mode stores a constant."""
    sign = (1 << (e + s)) if math.copysign(1.0, x) < 0 else 0
    x, bias, top = abs(x), (1 << (e - 1)) - 1, ((1 << e) - 1) << s
    if math.isnan(x):
        return sign | top | (1 << (s - 1))
    if math.isinf(x):
        return sign | top
    if x == 0:
        return sign
    ex = max(math.frexp(x)[1] - 1, 1 - bias)
    n = round(Fraction(x) / Fraction(2) ** (ex - s))
    if n >= 1 << (s + 1):
        ex, n = ex + 1, n >> 1
    if ex > bias:
        return sign | top
    if n < 1 << s:
        return sign | n
    return sign | ((ex + bias) << s) | (n - (1 << s))


def _const_value(tok: str) -> float | None:
    if tok.startswith("0x") and len(tok) == 18:
        return struct.unpack(">d", bytes.fromhex(tok[2:]))[0]
    try:
        return float(tok)
    except ValueError:
        return None


def _literal(x: float, ty: str) -> str:
    """IR literal of x rounded to the native type ty."""
    e, s = {v: k for k, v in NATIVE.items()}[ty]
    bits = _ieee_bits(x, e, s)
    if ty == "half":
        return f"0xH{bits:04X}"
    v = struct.unpack(">f", struct.pack(">I", bits))[0] if ty == "float" else \
        struct.unpack(">d", struct.pack(">Q", bits))[0]
    return "0x" + struct.pack(">d", v).hex().upper()


def line_of(toks) -> str:
    """An instruction printed from its tokens, callee and argument list joined as LLVM prints
    them (`@f(`): the marker scans (ad/api/markers.py) look for exactly that."""
    return re.sub(r'(@(?:[-\w.$]+|"[^"]*")) \(', r"\1(", join(toks))


def _vec(ty: str, scalar: str) -> str:
    """ty with its float element type replaced by `scalar` (vectors keep their length)."""
    return ty.replace(scalar_of(ty), scalar) if ty.startswith("<") else scalar


class _Body:
    """Emits the instructions of one truncated operation (into self.out)."""

    def __init__(self, low, tr, fn):
        self.low, self.tr, self.fn, self.out = low, tr, fn, []

    def tmp(self):
        self.low.tmps += 1
        return f"%tr.{self.low.tmps}"

    def emit(self, rhs) -> str:
        t = self.tmp()
        self.out.append(f"{t} = {rhs}")
        return t

    def fprt(self, kind, args, ret, loc, mode=None) -> str:
        tr = self.tr
        name = f"@__enzyme_fprt_{tr.tag}_{kind}"
        params = [t for t, _ in args] + ["i64", "i64", "i64", "ptr"]
        self.low.declare(name, ret, params)
        call = (f"call {ret} {name}(" + ", ".join(f"{t} {v}" for t, v in args)
                + f", i64 {tr.exp}, i64 {tr.sig}, i64 {mode or tr.mode}, ptr {loc})")
        if ret == "void":
            self.out.append(call)
            return ""
        return self.emit(call)

    def cast(self, v, src, dst):
        if scalar_of(src) == scalar_of(dst):
            return v
        bits = {"half": 16, "float": 32, "double": 64}
        a, b = scalar_of(src), scalar_of(dst)
        op = "fpext" if bits[a] < bits[b] else "fptrunc"
        return self.emit(f"{op} {src} {v} to {dst}")

    def _int(self, ty, bits):
        return _vec(ty, f"i{bits}")

    def narrow_literal(self, v):
        """A constant (scalar, vector or splat) of the `from` type rounded to the target, or
        None when v is not a literal."""
        c = _const_value(v)
        if c is not None:
            return _literal(c, self.tr.native)
        if v in ("zeroinitializer", "undef", "poison"):
            return v
        if not v.startswith(("<", "splat")):
            return None
        toks = tokenize(v)
        for k in range(len(toks) - 1):
            if toks[k] == self.tr.from_ty and _const_value(toks[k + 1]) is not None:
                toks[k], toks[k + 1] = self.tr.native, _literal(_const_value(toks[k + 1]),
                                                                self.tr.native)
        return join(toks)

    def unpack(self, v, ty):
        """mem mode, native target: the narrow float kept in the low bits of a `from` value
        (a literal is a number: rounded here)."""
        t = self.tr
        nt = _vec(ty, t.native)
        lit = self.narrow_literal(v)
        if lit is not None:
            return lit
        wide, narrow = {"double": 64, "float": 32}[t.from_ty], 16 if t.native != "float" else 32
        i = self.emit(f"bitcast {ty} {v} to {self._int(ty, wide)}")
        i = self.emit(f"trunc {self._int(ty, wide)} {i} to {self._int(ty, narrow)}")
        return self.emit(f"bitcast {self._int(ty, narrow)} {i} to {nt}")

    def pack(self, v, ty):
        """mem mode, native target: a narrow float (of type `_vec(ty, native)`) into its slot."""
        t = self.tr
        wide, narrow = {"double": 64, "float": 32}[t.from_ty], 16 if t.native != "float" else 32
        i = self.emit(f"bitcast {_vec(ty, t.native)} {v} to {self._int(ty, narrow)}")
        i = self.emit(f"zext {self._int(ty, narrow)} {i} to {self._int(ty, wide)}")
        return self.emit(f"bitcast {self._int(ty, wide)} {i} to {ty}")

    def packed_const(self, v, loc):
        """A `from` constant as a mem-mode value."""
        t = self.tr
        c = _const_value(v)
        if c is None:
            return v                           # zeroinitializer / undef / poison: zero bits
        if t.native:         # the narrow bits, zero-extended, as a literal of the slot's type
            bits = _ieee_bits(c, *{x: k for k, x in NATIVE.items()}[t.native])
            if t.from_ty == "float":
                bits = struct.unpack(">Q", struct.pack(">d", struct.unpack(
                    ">f", struct.pack(">I", bits))[0]))[0]
            return f"0x{bits:016X}"
        return self.fprt("const", [(t.from_ty, v)], t.from_ty, loc)

    def operand(self, v, ty, loc):
        """An operand of a truncated operation, in the type the operation computes in."""
        t = self.tr
        if not t.native:
            return self.packed_const(v, loc) if t.mode == MEM and _const_value(v) is not None else v
        if t.mode == MEM:
            return self.unpack(v, ty)
        lit = self.narrow_literal(v)
        return lit if lit is not None else self.cast(v, ty, _vec(ty, t.native))

    def result(self, v, ty):
        """The result (computed in the target type) back as a `from` value."""
        t = self.tr
        return self.pack(v, ty) if t.mode == MEM else self.cast(v, _vec(ty, t.native), ty)

    def real(self, v, loc):
        """mem mode: (value, type) of the number a `from` value holds, as an ordinary float."""
        t = self.tr
        if t.native:
            return self.unpack(v, t.from_ty), t.native
        return self.fprt("get", [(t.from_ty, v)], t.from_ty, loc), t.from_ty

    def rep(self, v, ty, loc):
        """mem mode: the representation of the ordinary float v (of type ty)."""
        t = self.tr
        if t.native:
            return self.pack(self.cast(v, ty, t.native), t.from_ty)
        return self.fprt("new", [(t.from_ty, self.cast(v, ty, t.from_ty))], t.from_ty, loc)
