"""Pointers whose shadow nothing reads: Enzyme builds a shadow only where a derivative needs it.

Activity gives a shadow to every pointer read from shadowed memory. Where the program stored a
constant pointer there (an `enzyme_const` object captured by reference in a lambda's closure,
beside an active one), that shadow is null, and reading through it, to build the shadows of the
pointers the object holds (its std::vector<int>'s begin and end), faults, although only integers
are read through them. A pointer's shadow is demanded when a use needs it: a float (or another
value carrying a derivative) read or written through it, the pointer stored, passed to a call
or returned; a shadow made from it by a GEP, cast, phi, select or pointer load is demanded in
turn. Comparisons and integer reads need none. A call demands the shadows of the arguments its
callees demand theirs of (a virtual method that never reads through `this`: param_demand in
the callee summary). Shadows that no use demands are dropped (`prune`); what was derived from
them needs none either."""
from __future__ import annotations

from enzyme_cc.ir.lexer import int_bits
from ..structure.local_slots import reloaded_param

# results whose shadow is only ever built from their operands' (never an object of their own)
_DERIVED = ("load", "getelementptr", "phi", "select", "bitcast", "addrspacecast", "freeze")
# uses that pass the operand's shadow on to the result's
_PASSING = tuple(op for op in _DERIVED if op != "load")
_NO_SHADOW_CALLS = ("@llvm.lifetime.", "@llvm.dbg.", "@llvm.assume", "@llvm.prefetch",
                    "@llvm.invariant.", "@llvm.launder", "@llvm.experimental.noalias")


def prune(act, fn, inert_call=None, arg_demand=None) -> set:
    """Drops from act.shadowed the derived pointers whose shadow no use demands; returns them.
    Sets act.param_demand: the positions of the pointer parameters whose shadow a use demands.
    `inert_call(inst)`: the call needs no shadow of its arguments when its own result needs
    none (a read-only accessor returning an address, as std::vector<int>::operator[]).
    `arg_demand(inst)`: the argument positions whose shadow the call's callees demand, or None
    (all of them)."""
    params = {p.name: k for k, p in enumerate(fn.params) if p.name in act.shadowed}
    # (a call's result keeps its shadow unless the call can run as primal code)
    # (a local slot's shadow too: unoptimized code keeps iterators in locals)
    drop = {i.name for i in fn.insts() if i.name in act.shadowed and i.ty == "ptr" and
            (i.op in _DERIVED or i.op == "alloca" or i.op in ("call", "invoke") and
             inert_call is not None and inert_call(i))}
    cand = drop | set(params)
    tracked = act.active | set(act.punned) | act.ptrint | act.unknown_copies
    memo: dict = {}

    def callee_demand(u):
        if id(u) not in memo:
            memo[id(u)] = arg_demand(u) if arg_demand is not None else None
        return memo[id(u)]

    def fixpoint(fill) -> set:
        demanded: set[str] = set()
        changed = bool(cand)
        while changed:
            changed = False
            for u in fn.insts():
                for k, o in enumerate(u.ops):
                    v = o.value
                    if v in cand and v not in demanded and _demands(
                            act, u, k, cand, demanded, tracked, inert_call, callee_demand,
                            fill):
                        demanded.add(v)
                        changed = True
        return demanded

    demanded = fixpoint(None)
    dropped = drop - demanded
    act.shadowed -= dropped
    act.inert_calls = {id(d) for v in dropped for d in [fn.defs.get(v)]
                       if d is not None and d.op in ("call", "invoke")}
    act.param_demand = {k for v, k in params.items() if v in demanded}
    # what callers are told: a parameter whose shadow only its own pointers stored back into
    # its memory, or it returned, demand (an iterator's operator++ on the caller's slot) needs
    # one only where the caller reads those back or uses the result (param_fill)
    act.param_fill = set()
    if any(u.op == "store" and u.ops[0].ty == "ptr" and
           _own(act, act._underlying(fn, u.ops[1].value), params) or
           u.op == "ret" and u.ops and _own(act, u.ops[0].value, params) for u in fn.insts()):
        own = fixpoint(set(params))
        act.param_fill = {k for v, k in params.items() if v in demanded and v not in own}
        act.param_demand -= act.param_fill
    return dropped


def _needed(name, cand, demanded) -> bool:
    return name not in cand or name in demanded


def _demands(act, u, k, cand, demanded, tracked, inert_call, callee_demand, fill) -> bool:
    """Use u (operand k) needs its operand's shadow. fill: the parameters whose shadow the
    caller is taken to read only where it demands it: their memory's, where their own pointers
    are stored back into it, and their own, returned (an iterator's operator++)."""
    op = u.op
    if op in ("icmp", "ptrtoint"):
        return u.name in act.ptrint
    if op in _PASSING:
        if op == "select" and k == 0:
            return False
        return bool(u.name) and u.name in act.shadowed and _needed(u.name, cand, demanded)
    if op == "load":
        if u.name in tracked:
            return True
        return u.name in act.shadowed and _needed(u.name, cand, demanded)
    if op == "store":
        val = u.ops[0]
        if k == 0:
            # the pointer itself stored: its shadow goes too, into the memory's shadow, unless
            # that is a local slot whose shadow nothing demands
            dest = act._underlying(act.fn, u.ops[1].value)
            if dest in cand and dest not in demanded:
                if _is_slot(act, dest):
                    return False
                p = fill and _own(act, dest, fill)
                if p and _param_roots(act, val.value, fill) <= {p}:
                    return False
            return True
        if val.ty == "ptr" and val.value in cand and val.value not in demanded:
            return False                # a pointer whose shadow nothing demands
        return not (int_bits(val.ty) and not val.ty.startswith("<") and
                    val.value not in tracked)
    if op in ("call", "invoke"):
        c = u.callee or ""
        if c.startswith(_NO_SHADOW_CALLS):
            return False
        if inert_call is not None and u.name and u.ty == "ptr" and u.name in cand and \
                u.name not in demanded and inert_call(u):
            return False
        wanted = callee_demand(u)
        if wanted is None or k in wanted[0]:
            return True
        if k in wanted[1]:
            # the callee stores pointers of its own into it or returns it: needed where the
            # caller reads them back or uses the result
            dest = act._underlying(act.fn, u.ops[k].value)
            return not (_is_slot(act, dest) and dest in cand and dest not in demanded and
                        not (u.name and act._uses.get(u.name)))
        return False
    if op == "ret" and fill:
        roots = _param_roots(act, u.ops[0].value, fill)
        return not (roots and roots <= fill)
    return True


def _is_slot(act, v) -> bool:
    return getattr(act.fn.defs.get(v), "op", None) == "alloca"


def _param_roots(act, v, params, seen=None) -> set:
    """The parameters (of `params`) pointer v is derived from: through GEPs, casts, phis,
    selects, and the memory a pointer was loaded from."""
    seen = set() if seen is None else seen
    if v in seen:
        return set()
    seen.add(v)
    p = _own(act, v, params)
    if p:
        return {p}
    d = act.fn.defs.get(v)
    op = getattr(d, "op", None)
    if op not in _DERIVED:
        return set()
    ops = d.ops[:1] if op in ("load", "getelementptr") else \
        d.ops[1:] if op == "select" else d.ops
    out = set()
    for o in ops:
        if o.value.startswith("%"):
            out |= _param_roots(act, o.value, params, seen)
    return out


def _own(act, v, params) -> str | None:
    """The parameter (of `params`) v is, itself or reloaded from its spill slot, or None."""
    p = v if v in params else reloaded_param(act.fn, v)
    return p if p in params else None
