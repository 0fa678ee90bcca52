"""Which bits of a float an integer computed from its bits depends on.

Integer code on a float's bits carries no derivative. That loses nothing where the integer is
piecewise constant in the float: its sign or exponent field (an isnan test, frexp's exponent,
a fast log's integer part). Where it depends on the mantissa (a fast log's fraction read from
the mantissa bits, a huge-argument reduction of sin), converting it back to a number
(sitofp/uitofp) is a continuous function of the float whose derivative would silently be zero.

`mantissa_source(fn, punned, v)` follows v's definition back to the float bits it came from:
bit-field extraction (shifts by constants, masks, truncation, extension) keeps each bit's
position in the float; arithmetic, variable shifts and joins keep only the set of bits.
"""
from __future__ import annotations

from enzyme_cc.ir.lexer import vector_shape

from .float_pairs import constant_lanes

# mantissa (significand field) widths of the IEEE formats a float's bits are viewed as
_MANTISSA = {"double": (64, 52), "float": (32, 23), "half": (16, 10), "bfloat": (16, 7)}
_SHIFTS = ("shl", "lshr", "ashr")
_SAME = ("freeze", "extractelement")
_JOINS = ("select", "phi", "insertelement", "shufflevector")
_ARITH = ("add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "or", "xor", "and")


def _shape(ty: str) -> tuple[int, str]:
    return vector_shape(ty) or (1, (ty or "").strip())


def _int_width(ty: str) -> int | None:
    el = _shape(ty)[1]
    return int(el[1:]) if el.startswith("i") and el[1:].isdigit() else None


def _splat(value: str, ty: str) -> int | None:
    """The one value of an integer constant (every lane the same), else None."""
    width = _int_width(ty)
    if width is None:
        return None
    n = vector_shape(ty)
    lanes = constant_lanes(value, n[0] if n else None, width)
    if not lanes or any(v is None or v != lanes[0] for v in lanes):
        return None
    return lanes[0]


class _Sources:
    """A value's dependence on a float's bits: ("pos", live, off) when bit j of the value (j in
    live) is bit j + off of the float's bits, ("set", bits) when it depends on those float bits
    in some way; None when it does not depend on float bits known here."""

    def __init__(self, fn, punned):
        self.fn, self.punned, self.memo = fn, punned, {}
        self.fmt: str | None = None       # the float format of the bits (one per question)

    def root(self, fty: str, ity: str):
        el = _shape(fty)[1]
        width = _int_width(ity)
        if el not in _MANTISSA or width is None or width % _MANTISSA[el][0]:
            return "unknown"
        if self.fmt not in (None, el):
            return "unknown"
        self.fmt = el
        return ("pos", (1 << width) - 1, 0)

    @staticmethod
    def as_set(dep):
        if dep is None or dep == "unknown" or dep[0] == "set":
            return dep
        _, live, off = dep
        bits, j = 0, 0
        while live >> j:
            if live >> j & 1 and j + off >= 0:
                bits |= 1 << (j + off)
            j += 1
        return ("set", bits)

    def union(self, deps):
        deps = [d for d in deps if d is not None]
        if not deps:
            return None
        if "unknown" in deps:
            return "unknown"
        return ("set", self._or(self.as_set(d)[1] for d in deps))

    @staticmethod
    def _or(values):
        out = 0
        for v in values:
            out |= v
        return out

    def of(self, v: str):
        if not v.startswith("%"):
            return None
        if v in self.memo:
            return self.memo[v]
        self.memo[v] = None                 # (a phi cycle: what comes round adds nothing new)
        self.memo[v] = dep = self._of(v)
        return dep

    def _of(self, v: str):
        inst = self.fn.defs.get(v)
        op = getattr(inst, "op", None)
        if op == "bitcast" and inst.ops and _shape(inst.ops[0].ty)[1] in _MANTISSA:
            return self.root(inst.ops[0].ty, inst.ty)
        if op in _SHIFTS or op in _ARITH or op in ("trunc", "zext", "sext", "bitcast") or \
                op in _SAME or op in _JOINS:
            return self._through(inst)
        if v in self.punned:                 # a loaded or passed copy of a float's bits
            return self.root(self.punned[v], getattr(inst, "ty", "") or "")
        return None

    def _through(self, inst):
        op, ops = inst.op, inst.ops
        if op in _JOINS:
            vals = [val for val, _ in inst.incoming] if op == "phi" else \
                [o.value for o in (ops[1:3] if op == "select" else ops[:2])]
            return self.union(self.of(x) for x in vals)
        src = self.of(ops[0].value) if ops else None
        width = _int_width(inst.ty or "")
        if op in _SAME or op in ("zext", "bitcast") and _shape(inst.ty)[0] == _shape(ops[0].ty)[0]:
            return src
        if op == "bitcast":                  # lanes regrouped: positions are lost
            return self.as_set(src)
        if op == "trunc" and src and src != "unknown" and src[0] == "pos" and width:
            return ("pos", src[1] & ((1 << width) - 1), src[2])
        if op in ("trunc", "sext"):
            return self.as_set(src)
        if len(ops) != 2:
            return self.as_set(src)
        return self._binary(op, ops, width)

    def _binary(self, op, ops, width):
        (da, ka), (db, kb) = ((None if not o.is_local else self.of(o.value),
                               None if o.is_local else _splat(o.value, o.ty)) for o in ops)
        if da is None and db is None:
            return None
        if "unknown" in (da, db):
            return "unknown"
        if db is None and da[0] == "pos" and kb is not None and width:
            _, live, off = da
            ones = (1 << width) - 1
            if op == "lshr":
                return ("pos", live >> kb, off + kb)
            if op == "shl":
                return ("pos", (live << kb) & ones, off - kb)
        if op in ("and", "or", "xor") and width:
            dep, k = (da, kb) if db is None else (db, ka)
            if dep is not None and dep[0] == "pos" and k is not None and (da is None or db is None):
                _, live, off = dep
                ones = (1 << width) - 1
                live = {"and": live & k, "or": live & ~k & ones, "xor": live}[op]
                return ("pos", live, off)
        return self.union([da, db])


def mantissa_source(fn, punned: dict, value: str) -> str | None:
    """The float format ('double', 'float', ...) whose mantissa bits integer `value` depends
    on, or None (it depends only on sign and exponent bits, on no float's bits, or on bits
    whose float is not known here)."""
    s = _Sources(fn, punned)
    dep = s.as_set(s.of(value))
    if dep is None or dep == "unknown" or s.fmt is None:
        return None
    width, mbits = _MANTISSA[s.fmt]
    field = (1 << mbits) - 1
    per_float = s._or(field << (width * k) for k in range(64 // width))
    return s.fmt if dep[1] & per_float else None
