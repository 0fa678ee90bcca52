"""Enzyme's truncation API: run a function with its floating-point values in a lower precision.

`__enzyme_truncate_op_func(f, from, to)` / `(f, from, exponent, significand)` and
`__enzyme_truncate_mem_func(...)` return a copy of f (and of every function it calls) in which
each operation on `from`-bit floats (64: double, 32: float) is computed in the target format
(widths 16/32/64 name IEEE half/single/double; the 4-argument form gives the exponent and
significand widths). The modes differ in what a `from` value holds:

- op mode: a value is an ordinary `from` float; every operation rounds its operands to the
  target, computes there and widens the result back (values in memory stay full width);
- mem mode: a value (argument, result, memory) holds the target representation:
  `__enzyme_truncate_mem_value(x, from, to)` makes one, `__enzyme_expand_mem_value` reads it.

Targets of Enzyme's own widths (float 8/23, half 5/10) are computed inline with
fptrunc/fpext and arithmetic of that type; a mem-mode value keeps the narrow float's bits in the
low bits of the `from` slot (upper bits zero). Every other target calls Enzyme's runtime ABI,
`__enzyme_fprt_<from>_<kind>_<op>(operands..., i64 exponent, i64 significand, i64 mode,
ptr loc)` (mode 1: mem, 2: op), which `<enzyme/fprt/mpfr.h>` implements with MPFR (in mem
mode a value is a pointer to an MPFR number); the link step supplies it when the program does
not. A program that defines its own (non-weak) `__enzyme_fprt_<from>_*` functions gets runtime
calls for every target of that type, as in Enzyme, so its implementation is honoured.

Lowered before AD (like ad/batch.py): the marker call becomes the clone's address.
"""
from __future__ import annotations

import math
import re
import struct
from fractions import Fraction

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import join, scalar_of, tokenize
from .diagnostics import located, source_of

_CALL = re.compile(r"@\"?[\w.$]*__enzyme_(truncate_(mem|op)_func|truncate_mem_value|"
                   r"expand_mem_value)[\w.$]*\"?\(")
IEEE = {16: (5, 10), 32: (8, 23), 64: (11, 52)}
# formats computed inline (Enzyme's own widths); bfloat (8, 7) goes through the runtime like
# any other: Debian's libgcc has no bfloat conversions (__truncdfbf2) for the code LLVM emits
NATIVE = {(11, 52): "double", (8, 23): "float", (5, 10): "half"}
_SUFFIX = {"double": "f64", "float": "f32", "half": "f16"}
MEM, OP = 1, 2
_HINT = ("call __enzyme_truncate_op_func((void *)f, 64, 32) or (f, 64, exponent_bits, "
         "significand_bits) with constant widths and a function defined in the program")
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


class Truncation:
    def __init__(self, mode, from_bits, to, where, user_fprt):
        if from_bits not in (32, 64):
            raise UserError(f"{where}: truncation from a {from_bits}-bit float is not supported "
                            f"(only from 64, double, or 32, float); hint: {_HINT}")
        self.mode, self.from_ty = mode, NATIVE[IEEE[from_bits]]
        self.tag = f"{from_bits}_{IEEE[from_bits][1]}"
        self.exp, self.sig = to
        if not (1 < self.exp and 1 < self.sig) or (self.exp, self.sig) >= IEEE[from_bits] \
                or self.exp > IEEE[from_bits][0] or self.sig > IEEE[from_bits][1]:
            raise UserError(f"{where}: cannot truncate {from_bits}-bit floats to {self.exp} "
                            f"exponent and {self.sig} significand bits (the target must be "
                            f"narrower than the source); hint: {_HINT}")
        native = NATIVE.get(to)
        self.native = None if user_fprt else native
        if mode == MEM and not self.native and self.from_ty != "double":
            raise UserError(f"{where}: mem-mode truncation of floats through the runtime needs "
                            "64-bit values (a float cannot hold the runtime's pointer); hint: "
                            "use __enzyme_truncate_op_func, or truncate doubles")

    @property
    def key(self):
        return (self.mode, self.tag, self.exp, self.sig, self.native)

    def label(self):
        return f"{'mem' if self.mode == MEM else 'op'}_{self.tag}to{self.exp}_{self.sig}"


# truncated copy -> the marker call that made it (for errors about its derivative)
MADE_AT: dict[str, str] = {}


def lower(text: str) -> str:
    """Rewrite every truncation marker call; returns the module text with the clones added."""
    MADE_AT.clear()
    if not _CALL.search(text):
        return text
    from enzyme_cc.ir.model import parse_module
    return _Lowering(parse_module(text)).run()


def refuse_derivative(fn):
    """Only op-mode copies computing in an LLVM type are differentiable (fptrunc/fpext and the
    narrow arithmetic have rules); a mem-mode value is a bit pattern, and the runtime's
    operations have no derivatives."""
    name = fn.name
    if not name.startswith('@"__enzyme_cc_trunc.'):
        return
    mem = name.startswith('@"__enzyme_cc_trunc.mem_')
    runtime = next((i for i in fn.insts() if i.op == "call" and
                    (i.callee or "").startswith("@__enzyme_fprt_")), None)
    if mem or runtime:
        plain = name[2:-1].split(".", 2)[2]
        why = ("mem-mode values are bit patterns of the narrow format" if mem else
               "it computes through the truncation runtime (a format without an LLVM type), "
               "whose operations have no derivatives")
        raise UserError(f"{MADE_AT.get(name, 'a truncation marker call')}: the truncated copy of "
                        f"'{plain}' is called by differentiated code, but enzyme-cc "
                        f"differentiates only op-mode truncation to float or half ({why});"
                        " hint: use __enzyme_truncate_op_func(f, 64, 32) (or 16) there, or call "
                        "the truncated function outside the differentiated code")


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
    them (`@f(`): the marker scans (ad/markers.py) look for exactly that."""
    return re.sub(r'(@(?:[-\w.$]+|"[^"]*")) \(', r"\1(", join(toks))


def _vec(ty: str, scalar: str) -> str:
    """ty with its float element type replaced by `scalar` (vectors keep their length)."""
    return ty.replace(scalar_of(ty), scalar) if ty.startswith("<") else scalar


class _Lowering:
    def __init__(self, module):
        self.m = module
        self.lines = list(module._lines)
        self.extra: list[str] = []
        self.decls: dict[str, str] = {}
        self.clones: dict[tuple, str] = {}
        self.locs: dict[str, str] = {}
        self.groups: dict[str, str] = {}
        self.tmps = 0
        # a program's own (strong) runtime functions: Enzyme calls them for every target
        self.user_fprt = {m.group(1) for name, (a, _) in module._bodies.items()
                          for m in [re.match(r'@"?__enzyme_fprt_(\d+_\d+)_', name)]
                          if m and not re.search(r"\b(weak|weak_odr|linkonce|linkonce_odr)\b",
                                                 module._lines[a].split("@")[0])}

    def run(self) -> str:
        for name, (start, end) in list(self.m._bodies.items()):
            if name.startswith('@"__enzyme_cc_trunc') or \
                    not _CALL.search("\n".join(self.m._lines[start:end])):
                continue
            fn = self.m.function(name)
            for inst in list(fn.insts()):
                if inst.op in ("call", "invoke") and inst.callee and _CALL.match(inst.callee + "("):
                    self._marker(fn, inst)
        decls = [d for n, d in sorted(self.decls.items()) if n not in self.m.declarations
                 and not self.m.defines(n)]
        return "\n".join(self.lines) + "\n" + "\n".join(self.extra + decls) + "\n"

    def _marker(self, fn, inst):
        where = located(self.m, fn, inst)
        callee = inst.callee
        if inst.op == "invoke":
            raise UserError(f"{where}: truncation markers in a try block are not supported; "
                            "hint: call them outside the try block")
        vals = []
        for o in inst.ops[1:]:
            if not re.fullmatch(r"-?\d+", o.value):
                raise UserError(f"{where}: the widths passed to '{_plain(callee)}' must be "
                                f"integer constants (got '{o.value}'); hint: {_HINT}")
            vals.append(int(o.value))
        if "func" in callee:
            mode = MEM if "truncate_mem_func" in callee else OP
            target = inst.ops[0].value if inst.ops else ""
            if not target.startswith("@") or self.m.function(target) is None:
                raise UserError(f"{where}: the first argument of '{_plain(callee)}' must be a "
                                f"function defined in the program; hint: {_HINT}")
            if len(vals) not in (2, 3):
                raise UserError(f"{where}: '{_plain(callee)}' takes (f, from, to) or (f, from, "
                                f"exponent, significand), not {len(inst.ops)} arguments")
            tr = self._truncation(mode, vals, where, callee)
            new = self.clone(target, tr, where)
            self._replace(inst, f"{inst.name} = {_identity(inst.ty, new)}" if inst.name else "")
            for use in fn.insts():      # the copy itself: direct calls, markers of it
                if inst.name and use is not inst and inst.name in use.toks:
                    toks = [new if t == inst.name else t for t in use.toks]
                    self.lines[use.line] = line_of(toks) + "".join(
                        f", {k} {v}" for k, v in use.md.items())
                    for k in range(use.line + 1, use.line_end + 1):
                        self.lines[k] = ""
            return
        # __enzyme_truncate_mem_value(x, from, to) / __enzyme_expand_mem_value(x, from, to)
        if len(vals) != 2 or not inst.ops or inst.ops[0].ty not in ("double", "float"):
            raise UserError(f"{where}: '{_plain(callee)}' takes (value, from, to): a float or "
                            f"double and two constant widths; hint: {_HINT}")
        tr = self._truncation(MEM, vals, where, callee)
        if inst.ops[0].ty != tr.from_ty:
            raise UserError(f"{where}: '{_plain(callee)}' got a {inst.ops[0].ty} for {vals[0]}-bit "
                            f"values; hint: pass a {tr.from_ty}")
        body = _Body(self, tr, None)
        x = inst.ops[0].value
        if "truncate" in callee:
            v = body.rep(x, tr.from_ty, self._loc(inst))
        else:
            v, ty = body.real(x, self._loc(inst))
            v = body.cast(v, ty, tr.from_ty)
        out = body.out + ([f"{inst.name} = {_identity(inst.ty, v)}"] if inst.name else [])
        self._replace(inst, "\n".join(out))

    def _truncation(self, mode, vals, where, callee):
        to = IEEE.get(vals[1]) if len(vals) == 2 else tuple(vals[1:])
        if to is None or vals[0] not in IEEE:
            raise UserError(f"{where}: the float widths passed to '{_plain(callee)}' must be 16, "
                            "32 or 64 (got "
                            f"{', '.join(map(str, vals))}); hint: {_HINT}")
        tag = f"{vals[0]}_{IEEE[vals[0]][1]}"
        return Truncation(mode, vals[0], to, where, tag in self.user_fprt)

    def _replace(self, inst, text):
        self.lines[inst.line] = text
        for k in range(inst.line + 1, inst.line_end + 1):
            self.lines[k] = ""

    def clone(self, name, tr, where) -> str:
        """The truncated copy of function `name` (made once per truncation)."""
        key = (name, tr.key)
        if key not in self.clones:
            plain = name[1:].strip('"')
            self.clones[key] = new = f'@"__enzyme_cc_trunc.{tr.label()}.{plain}"'
            MADE_AT[new] = where
            self.extra.append(_Clone(self, self.m.function(name), tr, new).text())
        return self.clones[key]

    def declare(self, name, ret, args):
        self.decls.setdefault(name, f"declare {ret} {name}({', '.join(args)})")

    def _loc(self, inst) -> str:
        """Enzyme's `loc` argument: a C string with the source location of the operation."""
        src = (source_of(self.m, inst.md.get("!dbg")) if inst is not None else None) or "unknown"
        if src not in self.locs:
            g = f"@__enzyme_cc_trunc.loc.{len(self.locs)}"
            data = src.encode() + b"\0"
            esc = "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:02X}"
                          for b in data)
            self.extra.append(f'{g} = private unnamed_addr constant [{len(data)} x i8] c"{esc}"')
            self.locs[src] = g
        return self.locs[src]

    def pure_free_group(self, group):
        """An attribute group like `group` without memory-effect attributes: a clone that calls
        the runtime reads and writes memory even when the original was pure."""
        if group not in self.groups:
            text = self.m.attr_groups.get(group, "{ }")
            text = re.sub(r"\bmemory\([^)]*\)|\b(readnone|readonly|writeonly|argmemonly|"
                          r"inaccessiblememonly|speculatable|willreturn|nosync|nofree)\b", "", text)
            self.groups[group] = g = f"#{9000 + len(self.groups)}"
            self.extra.append(f"attributes {g} = {text}")
        return self.groups[group]


def _plain(callee: str) -> str:
    m = re.search(r"__enzyme_\w+?(func|value)", callee)
    return m.group(0) if m else callee.lstrip("@")


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


from .truncate_clone import _Clone, _identity_of as _identity_v  # noqa: E402


def _identity(ty, v):
    return _identity_v(v, ty)
