"""Byte-offset paths into records (const_fields.py), the records pointers lead to through
local slots, and the records that point back to the record
that holds them: a solver object holding sub-objects that keep its address (GSL's ODE driver,
whose evolve object's `driver` field points back to it). The set of paths through such a
cycle is infinite; it is cut at MAX_DEPTH steps, and a cut path ends in UNKNOWN: the record
reached there may hold pointers without a shadow anywhere, so const_fields refuses a pointer
read from it rather than take it for one with a shadow.
"""
from __future__ import annotations

from ..structure.local_slots import local_slot_stores
from ..structure.type_layout import decompose, underlying

MAX_DEPTH = 6           # records within records a path follows (each level a derivative variant)
UNKNOWN = -(1 << 40)    # a cut path's last step (never a field's offset)


def cut(path: tuple) -> tuple:
    """path, or its first MAX_DEPTH - 1 steps and UNKNOWN where it is longer; a path already
    ending in UNKNOWN stays as it is past that step."""
    if UNKNOWN in path:
        path = path[:path.index(UNKNOWN) + 1]
    return path if len(path) <= MAX_DEPTH else path[:MAX_DEPTH - 1] + (UNKNOWN,)


def closed(paths, loops) -> frozenset:
    """paths with the paths through the record's back pointers: loops holds (a, b) where the
    record at offset a of the record holds the record's own address at offset b."""
    out = set(paths)
    while loops:
        new = {cut((a, b) + p) for a, b in loops for p in out} - out
        if not new:
            break
        out |= new
    return frozenset(out)


def covered(have, need) -> bool:
    """Every path in need is in have, or ends in UNKNOWN after a prefix of one in have (what
    lies past a cut is left unread)."""
    have = set(have)
    for n in need:
        if n in have:
            continue
        if n and n[-1] == UNKNOWN and any(h[:len(n) - 1] == n[:-1] for h in have):
            continue
        return False
    return True


def unknown_record(paths) -> bool:
    """The record with these paths is one past a cut: its fields are not known."""
    return (UNKNOWN,) in paths


def back_pointers(module, fn, obj) -> frozenset:
    """{(a, b)}: fn stores the address of the record obj at offset b of the record whose
    address it reads from obj's offset a (GSL's `d->e->driver = d`: the evolve object a
    driver holds points back to it; memoized)."""
    memo = fn.__dict__.setdefault("back_pointers", {})
    if obj not in memo:
        out = set()
        for inst in fn.insts() if obj else ():
            if inst.op == "store" and inst.ops[0].ty == "ptr" and \
                    base(module, fn, inst.ops[0].value) == (obj, 0):
                dst, b = base(module, fn, inst.ops[1].value)
                d = fn.defs.get(dst)
                src, a = base(module, fn, d.ops[0].value) if b is not None and \
                    getattr(d, "op", None) == "load" else (None, None)
                if src == obj and a is not None:
                    out.add((a, b))
        memo[obj] = frozenset(out)
    return memo[obj]


def is_back_pointer(module, fn, store, root: str) -> bool:
    """store writes root's address into a record read from one of root's own fields."""
    dst, b = base(module, fn, store.ops[1].value)
    d = fn.defs.get(dst)
    return b is not None and getattr(d, "op", None) == "load" and \
        base(module, fn, d.ops[0].value)[0] == root and (base(module, fn, d.ops[0].value)[1],
                                                          b) in back_pointers(module, fn, root)


def base(module, fn, ptr: str):
    """(the record ptr points into, seen through local slots, and the constant offset)."""
    obj, off = decompose(module, fn, ptr)
    return alias(fn, obj), off


def alias(fn, v: str) -> str:
    """The value v is, reloaded from a local slot one store fills and only loads read
    (unoptimized code's local variables: `const struct context *c = vp;`)."""
    for _ in range(8):
        d = fn.defs.get(v)
        if getattr(d, "op", None) != "load":
            return v
        stored = single_store_slots(fn).get(d.ops[0].value)
        if stored is None:
            return v
        v = underlying(fn, stored)
    return v


def single_store_slots(fn) -> dict:
    """{local slot: the value its one store writes} for slots otherwise only loaded (memoized
    per function)."""
    slots = fn.__dict__.get("_single_stores")
    if slots is None:
        slots = fn._single_stores = {s: v[0] for s, v in local_slot_stores(fn).items()
                                     if len(v) == 1 and v[0].startswith("%")}
    return slots
