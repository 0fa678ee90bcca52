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
from ..structure.type_layout import decompose
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
    """paths with those through the record's pointers back into itself: loops holds
    (dst, src, d) where the pointer at path dst points d bytes into the record at path src
    (src = (): the record itself, GSL's `d->e->driver = d`; the minimizer's state whose
    line-search wrapper points to its own part, `w->params = w`)."""
    out = set(paths)
    while loops:
        new = {cut(dst + r) for dst, src, d in loops
               for r in shifted({q[len(src):] for q in out
                                 if len(q) > len(src) and q[:len(src)] == src}, d)} - out
        if not new:
            break
        out |= new
    return frozenset(out)


def shifted(paths, at: int) -> frozenset:
    """The paths of a record seen from its byte offset `at` (the fields before it are out of
    reach)."""
    if at == 0:
        return frozenset(paths)
    return frozenset((p[0] - at,) + p[1:] for p in paths if p[0] >= at)


def covered(have, need, past_cuts: bool = False) -> bool:
    """Every path in need is in have, or ends in UNKNOWN after a prefix of one in have (what
    lies past a cut is left unread). past_cuts: or runs on past a cut in have (a path of have
    ending in UNKNOWN after a prefix of it), which its readers meet first (a record whose
    paths a caller cut one step sooner than fn would)."""
    have = set(have)
    cuts = {h[:-1] for h in have if h and h[-1] == UNKNOWN} if past_cuts else set()
    for n in need:
        if n in have:
            continue
        if n and n[-1] == UNKNOWN and any(h[:len(n) - 1] == n[:-1] for h in have):
            continue
        if cuts and any(n[:i] in cuts for i in range(len(n))):
            continue
        return False
    return True


def unknown_record(paths) -> bool:
    """The record with these paths is one past a cut: its fields are not known."""
    return (UNKNOWN,) in paths


def back_pointers(module, fn, obj) -> frozenset:
    """{(dst, src, d)}: fn makes the pointer at path dst from the record obj point d bytes
    into the record at path src from it (closed): a store of obj's own address, or a pointer
    into obj, into a record reached from it (GSL's `d->e->driver = d`), or such a store made
    by a callee handed both (every possible target of a function pointer: a stepper's
    `set_driver(d->s->state, d)`, a minimizer type's `set(s->state, s->fdf)`; memoized)."""
    memo = fn.__dict__.setdefault("back_pointers", {})
    if obj not in memo:
        me = alias(module, fn, obj) if obj else None    # (unoptimized: through a slot)
        out = set()
        for inst in fn.insts() if obj else ():
            if inst.op == "store" and inst.ops[0].ty == "ptr":
                edge = _store_edge(module, fn, inst, me)
                if edge is not None:
                    out.add(edge)
            elif inst.op in ("call", "invoke"):
                out |= {(dst, src, d) for _, dst, _, src, d in
                        _call_edges(module, fn, inst, [me])}
        memo[obj] = frozenset(e for e in out if len(e[0]) <= MAX_DEPTH)
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


def _store_edge(module, fn, store, me: str):
    """(dst, (), d): store writes the address d bytes into the record me at path dst from
    it (back_pointers); None where it writes something else or elsewhere."""
    v, a = (_place(module, fn, store.ops[i].value, [me]) for i in (0, 1))
    return (a[1] + (a[2],), (), v[2]) if v is not None and a is not None and not v[1] else None


def from_offset(off: int, path: tuple) -> tuple:
    """path, taken from `off` bytes before where it starts (its first step shifted)."""
    return (off + path[0],) + path[1:]


def _place(module, fn, ptr: str, roots):
    """(index in roots, c, off): ptr points off bytes into the record read from the record
    roots[i] by the chain c (() for roots[i] itself); None where it points elsewhere."""
    obj, off = base(module, fn, ptr)
    if off is None:
        return None
    for i, r in enumerate(roots):
        c = () if obj == r else chain(module, fn, obj, r) if r else None
        if c is not None:
            return i, c, off
    return None


def _call_edges(module, fn, call, roots) -> set:
    """{(i, dst, k, src, d)}: the call's possible targets make the pointer at path dst from
    roots[i] point d bytes into the record at path src from roots[k] (param_edges)."""
    out = set()
    places = [_place(module, fn, o.value, roots) if o.ty == "ptr" else None for o in call.ops]
    for t in call_targets(module, call) if any(places) else ():
        for j, dst, k, src, d in param_edges(module, t):
            pd = places[j] if j < len(places) else None
            ps = places[k] if k < len(places) else None
            if pd is None or ps is None:
                continue
            if src:
                src = ps[1] + from_offset(ps[2], src)
            else:
                src, d = ps[1], ps[2] + d
            out.add((pd[0], pd[1] + from_offset(pd[2], dst), ps[0], src, d))
    return out


def param_edges(module, name: str) -> frozenset:
    """{(j, dst, k, src, d)}: the function makes the pointer at path dst from its parameter j's
    record (the pointers at dst[:-1] read in turn, then offset dst[-1]) point d bytes into the
    record at path src from its parameter k's (src = (): that record itself); itself or
    through its callees (every possible target of a function pointer). sret pointers are left
    out (const_fields._held_in_sret). Memoized."""
    fn = module.function(name) if name.startswith("@") and module.defines(name) else None
    if fn is None:
        return frozenset()
    memo = fn.__dict__.get("param_edges")
    if memo is None:
        fn.param_edges = frozenset()            # (recursion)
        roots = [p.name if "sret" not in p.attrs else None for p in fn.params]
        out = set()
        for inst in fn.insts():
            if inst.op == "store" and inst.ops[0].ty == "ptr":
                v, a = (_place(module, fn, inst.ops[i].value, roots) for i in (0, 1))
                if v is not None and a is not None:
                    out.add((a[0], a[1] + (a[2],), v[0], v[1], v[2]))
            elif inst.op in ("call", "invoke") and inst.callee:
                out |= _call_edges(module, fn, inst, roots)
        memo = fn.param_edges = frozenset(
            e for e in out if len(e[1]) <= MAX_DEPTH and len(e[3]) <= MAX_DEPTH)
    return memo


def stored_params(module, name: str, k: int) -> frozenset:
    """{(j, path)}: the function stores its parameter k (its address, unshifted) at path from
    its parameter j (param_edges), j != k."""
    return frozenset((j, dst) for j, dst, k2, src, d in param_edges(module, name)
                     if k2 == k and j != k and not src and d == 0)


def is_back_pointer(module, fn, store, root: str) -> bool:
    """store writes root's address, or a pointer into root, into root or a record read from
    its fields (back_pointers)."""
    edge = _store_edge(module, fn, store, alias(module, fn, root))
    return edge is not None and edge in back_pointers(module, fn, root)


def param_holder(module, fn, root: str, dst: str, rest: tuple) -> bool:
    """fn stores its parameter root at `rest` from dst (a path), dst pointing into another
    parameter's record or a record read from its fields (stored_params): its callers check
    what they pass there."""
    params = [p.name for p in fn.params]
    if root not in params or not rest:
        return False
    k = params.index(root)
    at = _place(module, fn, dst, [p if j != k else None for j, p in enumerate(params)])
    return at is not None and \
        (at[0], at[1] + from_offset(at[2], rest)) in stored_params(module, fn.name, k)


def into_param(module, fn, store, root: str) -> bool:
    """store writes the parameter root's address into another parameter's record (or one read
    from its fields): the callers check what they pass there (stored_params)."""
    return param_holder(module, fn, root, store.ops[1].value, (0,))


def base(module, fn, ptr: str):
    """(the record ptr points into, seen through local slots one store fills, and the constant
    offset: unoptimized code's `line = &st->w.line; ... line->params`)."""
    obj, off = decompose(module, fn, ptr)
    for _ in range(8):
        d = fn.defs.get(obj)
        stored = single_store_slots(fn).get(d.ops[0].value) \
            if off is not None and getattr(d, "op", None) == "load" else None
        inner, at = decompose(module, fn, stored) if stored else (None, None)
        if at is None:
            break
        obj, off = inner, off + at
    return obj, off


def alias(module, fn, v: str) -> str:
    """The value v is, reloaded from a local slot one store fills and only loads read
    (unoptimized code's local variables: `const struct context *c = vp;`)."""
    obj, off = base(module, fn, v)
    return obj if off == 0 else v


def single_store_slots(fn) -> dict:
    """{local slot: the value its one store writes} for slots otherwise only loaded (memoized
    per function)."""
    slots = fn.__dict__.get("_single_stores")
    if slots is None:
        slots = fn._single_stores = {s: v[0] for s, v in local_slot_stores(fn).items()
                                     if len(v) == 1 and v[0].startswith("%")}
    return slots
