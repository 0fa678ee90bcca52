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
    drop = {i.name for i in fn.insts() if i.name in act.shadowed and i.ty == "ptr" and
            (i.op in _DERIVED or i.op in ("call", "invoke") and inert_call is not None and
             inert_call(i))}
    cand = drop | set(params)
    tracked = act.active | set(act.punned) | act.ptrint | act.unknown_copies
    memo: dict = {}

    def callee_demand(u):
        if id(u) not in memo:
            memo[id(u)] = arg_demand(u) if arg_demand is not None else None
        return memo[id(u)]

    demanded: set[str] = set()
    changed = bool(cand)
    while changed:
        changed = False
        for u in fn.insts():
            for k, o in enumerate(u.ops):
                v = o.value
                if v in cand and v not in demanded and _demands(
                        act, u, k, cand, demanded, tracked, inert_call, callee_demand):
                    demanded.add(v)
                    changed = True
    dropped = drop - demanded
    act.shadowed -= dropped
    act.inert_calls = {id(d) for v in dropped for d in [fn.defs.get(v)]
                       if d is not None and d.op in ("call", "invoke")}
    act.param_demand = {k for v, k in params.items() if v in demanded}
    return dropped


def _needed(name, cand, demanded) -> bool:
    return name not in cand or name in demanded


def _demands(act, u, k, cand, demanded, tracked, inert_call, callee_demand) -> bool:
    """Use u (operand k) needs its operand's shadow."""
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
            return True                 # the pointer itself stored: its shadow goes too
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
        return wanted is None or k in wanted
    return True
