"""Floats' 32 bits packed into one 64-bit integer, beside integer data or each other.

The x86-64 ABI passes and returns a small record whose 8 bytes hold a float and integer data
(`struct { float dist; int idx; }`, `std::pair<float, int>`, `std::optional<float>`) in one
integer register, and Rust's ABI does the same with `[f32; 2]`: the sender packs it (`zext` of a
float's bits, `shl` by 32 of the other half, `or`), the receiver unpacks it (`trunc` and `bitcast`
for the low half, `lshr` by 32 and `trunc` for the high one). The activity analysis follows the
floats through these operations as an `i64` whose float halves it knows (`Activity.packed`: the
set of bit offsets, 0 and/or 32, that hold float bits). Its adjoint is that float, or a
`< 2 x float >` when both halves are floats; its tangent is the same packing of the floats'
tangents beside zeros. An operation that moves every float out of the value (the `lshr` and
`trunc` that extract an integer field) leaves plain integer data, which carries no derivative and
loses none. Anything else on the bits stays refused (`Synth.refuse_bit_manipulation`)."""
from __future__ import annotations

from enzyme_cc.ir.lexer import adjoint_type_of, int_bits, split_fields

PACKING_OPS = ("zext", "shl", "lshr", "or", "add", "and", "trunc")
FLOAT_PAIR = "< 2 x float >"      # activity.pun_type's i64 of float data
_LOW = 0xFFFFFFFF
_BOTH = frozenset((0, 32))


def _const(v: str) -> int | None:
    try:
        return int(v) & 0xFFFFFFFFFFFFFFFF
    except ValueError:
        return None


def lanes_of(act, v: str):
    """The float halves of an i64 value: its packing, or both halves of a float pair (an i64
    read from memory that holds two floats, or a float and an integer: activity.pun_type)."""
    if v in act.packed:
        return act.packed[v]
    return _BOTH if act.punned.get(v) == FLOAT_PAIR else None


def adjoint_type(lanes) -> str:
    return "float" if len(lanes) == 1 else FLOAT_PAIR


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
        return all(_zero_at(fn, v, lane, depth + 1) for v in set(vals))
    return False


def _moved(inst, lanes):
    """Where the float halves `lanes` of inst's first operand go in its result: {source offset:
    result offset}, or None when the operation mixes their bits."""
    op = inst.op
    n = _const(inst.ops[1].value) if len(inst.ops) > 1 else None
    if op in ("shl", "lshr"):
        if n != 32:
            return None
        step = 32 if op == "shl" else -32
        return {s: s + step for s in lanes if 0 <= s + step < 64}
    if op == "and":
        if n is None or any(0 < (n >> s) & _LOW < _LOW for s in lanes):
            return None                     # a mask through a float's bits
        return {s: s for s in lanes if (n >> s) & _LOW}
    if op == "trunc":
        return {0: 0} if inst.ty == "i32" and 0 in lanes else \
            {} if inst.ty in ("i32", "i16", "i8", "i1") else None
    return None


def packed_lane(act, inst):
    """The float halves (a frozenset of bit offsets) of an integer operation's result on packed
    floats; "whole" for the i32 a `trunc` takes a low float out as; None when the result holds no
    float this way (or mixes a float's bits)."""
    op, ops = inst.op, inst.ops
    a = ops[0].value
    if op == "zext":
        return frozenset((0,)) if inst.ty == "i64" and ops[0].ty == "i32" and \
            act.punned.get(a) == "float" and a not in act.packed else None
    if op in ("or", "add"):
        if inst.ty != "i64":
            return None
        out = set()
        for o, other in ((ops[0], ops[1]), (ops[1], ops[0])):
            lanes = lanes_of(act, o.value)
            if lanes is None:
                if o.value in act.punned or o.value in act.active:
                    return None
                continue
            if not all(_zero_at(act.fn, other.value, s) for s in lanes):
                return None
            out |= lanes
        return frozenset(out) or None
    lanes = lanes_of(act, a)
    if lanes is None or ops[0].ty != "i64":
        return None
    moved = _moved(inst, lanes)
    if not moved:
        return None
    if op == "trunc":
        return "whole"
    return frozenset(moved.values())


def drops_float(act, inst) -> bool:
    """inst takes integer data out of a packed value and none of the floats' bits: its result
    is an integer like any other."""
    if not inst.ops or inst.op not in ("shl", "lshr", "and", "trunc"):
        return False
    lanes = lanes_of(act, inst.ops[0].value)
    return lanes is not None and inst.ops[0].ty == "i64" and _moved(inst, lanes) == {}


def reverse(ctx, inst, d):
    """The adjoint d of a packing operation's result (typed by its float halves) moved to the
    operands that carry them."""
    act = ctx.act
    res = (frozenset((0,)) if inst.op == "trunc" else lanes_of(act, inst.name))
    if inst.op == "zext":
        ctx.add(inst.ops[0].value, "float", d)
        return
    if inst.op in ("or", "add"):
        for o in inst.ops:
            lanes = lanes_of(act, o.value)
            if lanes is not None:
                ctx.add(o.value, adjoint_type(lanes), _regroup(ctx, d, res, {s: s for s in lanes},
                                                               lanes))
        return
    src = inst.ops[0].value
    lanes = lanes_of(act, src)
    ctx.add(src, adjoint_type(lanes), _regroup(ctx, d, res, _moved(inst, lanes), lanes))


def _regroup(ctx, d, res, moved, lanes):
    """The adjoint of a value with float halves `lanes` from that of a result with halves `res`,
    source half s becoming result half moved[s] (halves that did not survive: zero)."""
    if len(lanes) == 1:
        (s,) = lanes
        r = moved.get(s)
        if r is None:
            return "0.0"
        if len(res) == 1:
            return d
        t = ctx.tmp()
        ctx.emit(f"{t} = extractelement {FLOAT_PAIR} {d}, i32 {r // 32}")
        return t
    if len(res) == 2 and all(moved.get(s) == s for s in lanes):
        return d
    acc = "zeroinitializer"
    for s in sorted(lanes):
        r = moved.get(s)
        if r is None:
            continue
        x = d
        if len(res) == 2:
            x = ctx.tmp()
            ctx.emit(f"{x} = extractelement {FLOAT_PAIR} {d}, i32 {r // 32}")
        t = ctx.tmp()
        ctx.emit(f"{t} = insertelement {FLOAT_PAIR} {acc}, float {x}, i32 {s // 32}")
        acc = t
    return acc


def tangent(ctx, inst):
    """The same operation on the operands' tangents (the integer data's tangent is zero)."""
    if inst.op in ("or", "add"):
        ts = [ctx.t(o.value, "i64") for o in inst.ops if lanes_of(ctx.act, o.value) is not None]
        if len(ts) == 1:
            return ts[0]
        t = ctx.tmp("t")
        ctx.emit(f"{t} = or i64 {ts[0]}, {ts[1]}")
        return t
    a = inst.ops[0]
    t = ctx.tmp("t")
    if inst.op in ("zext", "trunc"):
        ctx.emit(f"{t} = {inst.op} {a.ty} {ctx.t(a.value, a.ty)} to {inst.ty}")
    else:
        ctx.emit(f"{t} = {inst.op} {inst.ty} {ctx.t(a.value, a.ty)}, {inst.ops[1].value}")
    return t


def param_lanes(fn, name: str):
    """The halves of its i64 parameter `name` a function reads floats out of (a record of a
    float and integer data, or two floats, passed by value in one register: `trunc`, or `lshr`
    by 32 and `trunc`, then a bitcast to float); None when it reads none this way."""
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
    return frozenset(lanes) or None


def takes_whole(fn, k: int, caller_act, v: str) -> bool:
    """fn's parameter k takes the float whose bits the caller's integer v carries whole (an i64
    as a double, an i32 as a float), not unpacked into halves."""
    p = fn.params[k]
    return v not in caller_act.packed and caller_act.punned[v] == adjoint_type_of(p.ty) and \
        not (p.ty == "i64" and param_lanes(fn, p.name))


def param_adjoint_type(fn, p) -> str:
    """The type of parameter p's adjoint: the floats packed in it, or adjoint_type_of's."""
    lanes = param_lanes(fn, p.name) if p.ty == "i64" else None
    return adjoint_type(lanes) if lanes else adjoint_type_of(p.ty)


# ---- records of several integer registers ------------------------------------------------------
# A record of more than 8 bytes with a union of a float and integer data in an eightbyte (`struct
# { int ok; union { double v; char *msg; } u; }`) is returned as a literal struct whose field for
# that eightbyte is an integer (`{ i32, i64 }`, or `{ double, i64 }` beside a double): the
# float's bits are that field, inserted and extracted whole. Its adjoint is the same struct with
# that field the float (`{ i32, double }`, integer fields ignored, as in any record adjoint); its
# tangent is the struct of the fields' tangents (integers, as tangents of a float's bits are
# kept).

def is_flat_record(ty: str) -> bool:
    """A literal struct type of integers, pointers and floats (one level: the records the ABI
    returns in registers, `{ i32, i64 }`, `{ double, i64 }`, `{ i64, float }`)."""
    if not ty.startswith("{") or "{" in ty[1:] or "[" in ty or "<" in ty:
        return False
    return all(int_bits(f) or f in ("ptr", "double", "float") for f in split_fields(ty))


def is_int_record(ty: str) -> bool:
    """A flat record of integers and pointers only."""
    return is_flat_record(ty) and not any(f in ("double", "float") for f in split_fields(ty))


def record_pun(act, inst):
    """The adjoint type of an insertvalue into, or extractvalue of, a record of integer
    registers that carries a float's bits whole in a field; None when it carries none."""
    agg = inst.ops[0]
    if inst.op == "extractvalue":
        pun = act.punned.get(agg.value)
        if pun is None or len(inst.indices) != 1:
            return None
        field = split_fields(pun)[inst.indices[0]]
        return field if field != inst.ty else None
    if not is_flat_record(inst.ty) or len(inst.indices) != 1:
        return None
    elem = inst.ops[1]
    fields = split_fields(act.punned.get(agg.value, inst.ty))
    fields[inst.indices[0]] = act.punned.get(elem.value, elem.ty)   # (packed: Activity refuses)
    return "{ " + ", ".join(fields) + " }" if fields != split_fields(inst.ty) else None
