"""A float's 32 bits packed beside integer data in one 64-bit integer.

The x86-64 ABI returns a small record whose 8 bytes mix a float and integer data (`struct {
float dist; int idx; }`, `std::pair<float, int>`, `std::optional<float>`) in one integer
register: the callee packs it (`zext` of the float's bits, `shl` of the other field by 32, `or`),
the caller unpacks it (`trunc` and `bitcast` for the float, `lshr` and `trunc` for the int). The
activity analysis follows the float through these operations as an `i64` that carries a float
at bit offset 0 or 32 (`Activity.packed`); its adjoint is that float, and its tangent the same
packing of the float's tangent beside zeros. An operation that moves the float out of the value
(the `lshr` and `trunc` that extract the integer field) leaves plain integer data, which carries
no derivative and loses none. Anything else on the bits stays refused
(`Synth.refuse_bit_manipulation`)."""
from __future__ import annotations

from enzyme_cc.ir.lexer import adjoint_type_of

PACKING_OPS = ("zext", "shl", "lshr", "or", "add", "and", "trunc")
FLOAT_PAIR = "< 2 x float >"      # activity.pun_type's i64 of float data
_LOW = 0xFFFFFFFF


def _const(v: str) -> int | None:
    try:
        return int(v) & 0xFFFFFFFFFFFFFFFF
    except ValueError:
        return None


def _zero_at(fn, v: str, lane: int, depth: int = 0) -> bool:
    """The 32 bits of integer v at offset lane are known to be zero."""
    c = _const(v)
    if c is not None:
        return (c >> lane) & _LOW == 0
    d = fn.defs.get(v)
    op = getattr(d, "op", None)
    if op is None or depth > 8:
        return False
    if op == "shl":
        n = _const(d.ops[1].value)
        return lane == 0 and n is not None and n >= 32
    if op == "zext":
        return lane == 32 and d.ops[0].ty in ("i32", "i16", "i8", "i1")
    if op == "lshr":
        n = _const(d.ops[1].value)
        return lane == 32 and n is not None and n >= 32
    if op == "and":
        return any(_zero_at(fn, o.value, lane, depth + 1) for o in d.ops)
    if op in ("or", "phi", "select"):
        vals = [v for v, _ in d.incoming] if op == "phi" else \
            [o.value for o in (d.ops[1:] if op == "select" else d.ops)]
        return all(_zero_at(fn, v, lane, depth + 1) for v in vals)
    return False


def packed_lane(act, inst) -> int | None:
    """What inst (an integer operation) makes of a float packed into an i64: the float's offset
    in its result (0 or 32), -1 for a `trunc` that gives the float's own 32 bits, or None when
    the result holds no float this way."""
    op, ops = inst.op, inst.ops
    a = ops[0].value
    if op == "trunc":
        return -1 if inst.ty == "i32" and act.packed.get(a) == 0 else None
    if inst.ty != "i64":
        return None
    if op == "zext":
        return 0 if ops[0].ty == "i32" and act.punned.get(a) == "float" and \
            a not in act.packed else None
    if op in ("shl", "lshr"):
        n = _const(ops[1].value)
        lane = act.packed.get(a)
        if lane is None or n != 32:
            return None
        return 32 if op == "shl" and lane == 0 else 0 if op == "lshr" and lane == 32 else None
    if op in ("or", "add"):
        inside = [o for o in ops if o.value in act.packed]
        if len(inside) != 1:
            return None
        other = ops[1] if inside[0] is ops[0] else ops[0]
        lane = act.packed[inside[0].value]
        if other.value in act.punned or other.value in act.active or \
                not _zero_at(act.fn, other.value, lane):
            return None
        return lane
    if op == "and":
        lane, mask = act.packed.get(a), _const(ops[1].value)
        return lane if lane is not None and mask is not None and \
            (mask >> lane) & _LOW == _LOW else None
    return None


def drops_float(act, inst) -> bool:
    """inst takes the integer data out of a packed value and none of the float's bits: its
    result is an integer like any other."""
    op, ops = inst.op, inst.ops
    if not ops:
        return False
    lane = act.packed.get(ops[0].value)
    if lane is None:
        return False
    n = _const(ops[1].value) if len(ops) > 1 else None
    if op == "lshr":
        return lane == 0 and n is not None and n >= 32
    if op == "trunc":
        return lane == 32 and inst.ty in ("i32", "i16", "i8", "i1")
    if op == "and":
        return n is not None and (n >> lane) & _LOW == 0
    return False


def packed_source(act, inst) -> str | None:
    """The operand of a packing operation whose float its result carries."""
    if inst.op in ("or", "add"):
        return next((o.value for o in inst.ops if o.value in act.punned), None)
    return inst.ops[0].value


def param_lane(fn, name: str) -> int | None:
    """The offset of the float a function reads out of its i64 parameter `name` (a record of a
    float and integer data passed by value in one register: `trunc` or `lshr` by 32 and `trunc`,
    then a bitcast to float); None when it reads no float this way, or two."""
    users: dict = {}
    for i in fn.insts():
        for o in i.ops:
            users.setdefault(o.value, []).append(i)

    def as_float(v):
        return any(u.op == "bitcast" and u.ty == "float" for u in users.get(v, ()))

    lanes = set()
    for u in users.get(name, ()):
        if u.op == "trunc" and u.ty == "i32" and as_float(u.name):
            lanes.add(0)
        elif u.op == "lshr" and _const(u.ops[1].value) == 32:
            if any(w.op == "trunc" and w.ty == "i32" and as_float(w.name)
                   for w in users.get(u.name, ())):
                lanes.add(32)
    return lanes.pop() if len(lanes) == 1 else None


def param_adjoint_type(fn, p) -> str:
    """The type of parameter p's adjoint: the float packed in it, or adjoint_type_of's."""
    if p.ty == "i64" and param_lane(fn, p.name) is not None:
        return "float"
    return adjoint_type_of(p.ty)
