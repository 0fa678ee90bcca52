"""Byte-offset paths into records (const_fields.py), the records pointers lead to through
local slots, and the records that point back to the record that holds them (directly, or
through a function that stores one parameter into another): a solver object holding
sub-objects that keep its address (GSL's ODE driver, whose evolve object's `driver` field
points back to it). The set of paths through such a cycle is infinite; a path is cut at
LOOP_DEPTH steps, and a cut path ends in UNKNOWN: the record reached there may hold pointers
without a shadow anywhere, so const_fields refuses a pointer read from it rather than take
it for one with a shadow.
"""
from __future__ import annotations

from ..structure.local_slots import local_slot_stores
from ..structure.type_layout import decompose, underlying
from .typeinfo import call_targets

MAX_DEPTH = 6           # records within records a path follows (each level a derivative variant)
LOOP_DEPTH = 10         # where a path is cut (a reader may go round a cycle of back pointers)
UNKNOWN = -(1 << 40)    # a cut path's last step (never a field's offset)


def cut(path: tuple) -> tuple:
    """path, or its first LOOP_DEPTH - 1 steps and UNKNOWN where it is longer; a path
    already ending in UNKNOWN stays as it is past that step."""
    if UNKNOWN in path:
        path = path[:path.index(UNKNOWN) + 1]
    return path if len(path) <= LOOP_DEPTH else path[:LOOP_DEPTH - 1] + (UNKNOWN,)


def closed(paths, loops) -> frozenset:
    """paths with the paths through the record's back pointers: loops holds (a1, ..., b)
    where the record reached through the pointers at a1, ... holds the record's own address at
    offset b."""
    out = set(paths)
    while loops:
        new = {cut(loop + p) for loop in loops for p in out} - out
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
    """{(a1, ..., ak, b)}: fn stores the address of the record obj at offset b of the record
    it reaches from obj by reading the pointers at offsets a1, ..., ak (GSL's
    `d->e->driver = d`: the evolve object a driver holds points back to it), itself or through
    a callee that stores one parameter into another (a stepper's `set_driver(d->s->state, d)`
    through its type's function pointer: every possible target; memoized)."""
    memo = fn.__dict__.setdefault("back_pointers", {})
    if obj not in memo:
        out = set()
        for inst in fn.insts() if obj else ():
            if inst.op == "store" and inst.ops[0].ty == "ptr" and \
                    base(module, fn, inst.ops[0].value) == (obj, 0):
                dst, b = base(module, fn, inst.ops[1].value)
                c = chain(module, fn, dst, obj) if b is not None else None
                if c:
                    out.add(c + (b,))
            elif inst.op in ("call", "invoke"):
                ks = [k for k, o in enumerate(inst.ops)
                      if o.ty == "ptr" and base(module, fn, o.value) == (obj, 0)]
                for t in call_targets(module, inst) if ks else ():
                    for j, b in {jb for k in ks for jb in stored_params(module, t, k)}:
                        dst, at = base(module, fn, inst.ops[j].value)
                        c = chain(module, fn, dst, obj) if at == 0 else None
                        if c:
                            out.add(c + (b,))
        memo[obj] = frozenset(out)
    return memo[obj]


def chain(module, fn, obj: str, root: str, depth: int = 3):
    """(a1, ..., ak): obj is the record read from root's offset a1, then from that record's
    offset a2, ... (k <= depth); None where it is not."""
    path = ()
    for _ in range(depth):
        d = fn.defs.get(obj)
        if getattr(d, "op", None) != "load":
            return None
        src, a = base(module, fn, d.ops[0].value)
        if a is None:
            return None
        path = (a,) + path
        if src == root:
            return path
        obj = src
    return None


def stored_params(module, name: str, k: int) -> frozenset:
    """{(j, b)}: the function stores its parameter k at offset b of its parameter j, not its
    sret pointer (const_fields._held_in_sret; memoized)."""
    fn = module.function(name) if name.startswith("@") and module.defines(name) else None
    if fn is None or k >= len(fn.params):
        return frozenset()
    memo = fn.__dict__.setdefault("stored_params", {})
    if k not in memo:
        memo[k] = frozenset()           # (recursion)
        params = {p.name: j for j, p in enumerate(fn.params) if "sret" not in p.attrs}
        mine, out = fn.params[k].name, set()
        for inst in fn.insts():
            if inst.op == "store" and inst.ops[0].ty == "ptr" and \
                    base(module, fn, inst.ops[0].value) == (mine, 0):
                dst, b = base(module, fn, inst.ops[1].value)
                if dst in params and params[dst] != k and b is not None:
                    out.add((params[dst], b))
            elif inst.op in ("call", "invoke") and (inst.callee or "").startswith("@"):
                for k2, o in enumerate(inst.ops):     # (a callee doing it: `set` calling
                    if o.ty != "ptr" or base(module, fn, o.value) != (mine, 0):  # set_with_values)
                        continue
                    for j2, b in stored_params(module, inst.callee, k2):
                        dst, off = base(module, fn, inst.ops[j2].value) \
                            if j2 < len(inst.ops) else (None, None)
                        if dst in params and params[dst] != k and off is not None:
                            out.add((params[dst], off + b))
        memo[k] = frozenset(out)
    return memo[k]


def is_back_pointer(module, fn, store, root: str) -> bool:
    """store writes root's address into a record read from root's fields (back_pointers)."""
    dst, b = base(module, fn, store.ops[1].value)
    c = chain(module, fn, dst, root) if b is not None else None
    return c is not None and c + (b,) in back_pointers(module, fn, root)


def param_holder(module, fn, root: str, dst: str, b: int) -> bool:
    """fn stores its parameter root at offset b of its parameter dst (stored_params): its
    callers check what they pass there."""
    params = [p.name for p in fn.params]
    return root in params and dst in params and dst != root and b is not None and \
        (params.index(dst), b) in stored_params(module, fn.name, params.index(root))


def into_param(module, fn, store, root: str) -> bool:
    """store writes the parameter root's address into another parameter's record: the
    callers check what they pass there (stored_params)."""
    dst, b = base(module, fn, store.ops[1].value)
    return param_holder(module, fn, root, dst, b)


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
