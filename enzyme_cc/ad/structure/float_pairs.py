"""Integer constants' lanes, and sign masks on pairs of floats held in 64-bit integer lanes,
split into 32-bit lanes before float_bits' rewrite.

Eigen's float abs under AVX-512 and hand-written SSE (`_mm_and_si128` on `_mm_castps_si128`)
clear or flip the sign bits of 2N floats as N i64 lanes: `and <8 x i64> %bits,
splat (i64 0x7FFFFFFF7FFFFFFF)` between views of `<16 x float>`. float_bits pairs integer
and float lanes one to one; here such an operation becomes the same one on `<2N x i32>` (each
i64 constant split into its low and high halves: x86 is little-endian), reading the bits of the
same floats (a bitcast of the float vector, or the same memory loaded as i32 lanes), and the
float views of its result read the new one."""
from __future__ import annotations

import re

from enzyme_cc.ir.model import parse_inst

_LANE = re.compile(r"i(?:64|32)\s+(-?\d+|undef|poison)")
_WIDE = re.compile(r"<\s*(\d+)\s*x\s*i64\s*>")


def constant_lanes(const: str, n: int | None, bits: int) -> list[int | None] | None:
    """The lane values of an integer constant, as unsigned `bits`-bit numbers (None: undef or
    poison, a lane whose result is unused and may keep the operand)."""
    c = const.strip()
    if re.fullmatch(r"-?\d+", c):
        vals = [int(c)]
    elif c == "zeroinitializer":
        vals = [0]
    else:
        vals = [None if v in ("undef", "poison") else int(v) for v in _LANE.findall(c)]
        if not vals or not (c.startswith("<") or c.startswith("splat")):
            return None
    if len(vals) == 1:
        vals = vals * (n or 1)
    if len(vals) != (n or 1):
        return None
    return [None if v is None else v & ((1 << bits) - 1) for v in vals]


def _pairs(ty: str) -> int | None:
    """2N for <N x i64>, else None."""
    m = _WIDE.fullmatch(ty or "")
    return 2 * int(m.group(1)) if m else None


def _pair_op(inst, users):
    """(the integer operand, the i64 constant's lanes) of an and/or/xor of <N x i64> whose
    users all view its result as <2N x float>, else None."""
    n = _pairs(inst.ty)
    if inst.op not in ("and", "or", "xor") or n is None or len(inst.ops) != 2:
        return None
    a, c = inst.ops if inst.ops[0].is_local else inst.ops[::-1]
    if not a.is_local or c.is_local:
        return None
    lanes = constant_lanes(c.value, n // 2, 64)
    uses = users.get(inst.name, [])
    if not lanes or None in lanes or not uses or not all(
            _float_view(u, n) or _stored(u, inst.name) for u in uses) or \
            not any(_float_view(u, n) for u in uses):
        return None
    return a.value, lanes


def _stored(u, v: str) -> bool:
    """u stores v (the bits kept in memory, as Eigen's sin keeps |x| for its slow path)."""
    return u.op == "store" and u.ops[0].value == v and u.ops[1].value != v


def _regrouped(u, v: str, n: int) -> bool:
    """u views v's bits as <n x i32> (Eigen's sin reads x's sign bits so)."""
    return u.op == "bitcast" and u.ops[0].value == v and \
        (u.ty or "").replace(" ", "") == f"<{n}xi32>"


def _float_bits_source(fn, users, v: str, n: int) -> str | None:
    """'bitcast' when v is the bits of a <n x float> value, 'load' when v is a load whose every
    user is such an operation (the memory then loaded as i32 lanes), else None."""
    d = fn.defs.get(v)
    if getattr(d, "op", None) == "bitcast" and d.ops[0].ty.replace(" ", "") == f"<{n}xfloat>":
        return "bitcast"
    if getattr(d, "op", None) == "load" and all(_pair_op(u, users) or _float_view(u, n) or
                                                _regrouped(u, v, n) for u in users[v]):
        return "load"
    return None


def _float_view(u, n: int) -> bool:
    """u views its operand as <n x float> (x beside |x| in Eigen's sqrt)."""
    return u.op == "bitcast" and (u.ty or "").replace(" ", "") == f"<{n}xfloat>"


def split_float_pairs(fn) -> bool:
    """Rewrite fn's sign operations on pairs of floats (module docstring); True if any."""
    users = fn.users()
    new: dict[str, list] = {}          # instruction name -> what replaces it
    for inst in fn.insts():
        found = _pair_op(inst, users)
        n = _pairs(inst.ty)
        kind = found and _float_bits_source(fn, users, found[0], n)
        if not kind:
            continue
        i32, src = f"<{n} x i32>", fn.defs[found[0]]
        res = inst.name + ".i32"
        if kind == "bitcast":
            bits = inst.name + ".bits"
            lines = [f"{bits} = bitcast <{n} x float> {src.ops[0].value} to {i32}"]
        else:
            bits, lines = src.name + ".i32", []
            load = reloaded(src, bits, i32)
            if load is None:
                continue                               # (volatile or atomic: left alone)
            new[src.name] = [load]
            for u in users[src.name]:
                if _float_view(u, n):
                    new[u.name] = [located_inst(f"{u.name} = bitcast {i32} {bits} to {u.ty}", u)]
                elif _regrouped(u, src.name, n):      # (its users read the i32 load itself)
                    new[u.name] = []
                    for w in users.get(u.name, []):
                        _rename_operand(w, u.name, bits)
        halves = ", ".join(f"i32 {h}" for v in found[1] for h in (v & 0xFFFFFFFF, v >> 32))
        new[inst.name] = [located_inst(t, inst) for t in
                          lines + [f"{res} = {inst.op} {i32} {bits}, <{halves}>"]]
        for u in users[inst.name]:
            if _stored(u, inst.name):
                _rename_operand(u, inst.name, res, i32)
            else:
                new[u.name] = [located_inst(f"{u.name} = bitcast {i32} {res} to <{n} x float>", u)]
    if not new:
        return False
    for b in fn.blocks:
        b.insts = [x for i in b.insts for x in new.get(i.name, [i])]
    fn.index()
    return True


def _rename_operand(inst, old: str, name: str, ty: str | None = None):
    """inst reads `name` where it read `old`; of type ty (for the <N x i64> before it)."""
    toks, k = list(inst.toks), inst.toks.index(old)
    toks[k] = name
    if ty is not None:
        text = " ".join(toks[:k])
        last = list(_WIDE.finditer(text))[-1]
        toks = parse_inst(text[:last.start()] + ty + text[last.end():] + " " +
                          " ".join(toks[k:])).toks
    inst.toks = toks
    for o in inst.ops:
        if o.value == old:
            o.value = name
            if ty is not None:
                o.ty = ty


def located_inst(text, like, md=None):
    """A new instruction from text, at like's source lines (with metadata md, else none)."""
    out = parse_inst(text)
    out.line, out.line_end, out.md = like.line, like.line_end, md or {}
    return out


def reloaded(load, name: str, ty: str):
    """The same plain load as `name`, reading type ty (its metadata kept), or None for a
    volatile or atomic load."""
    text = str(load)
    head = f"{load.name} = load "
    old_ty, sep, rest = text[len(head):].partition(" , ")
    if not text.startswith(head) or not sep or \
            old_ty.replace(" ", "") != (load.ty or "").replace(" ", ""):
        return None
    return located_inst(f"{name} = load {ty}, {rest}", load, load.md)
