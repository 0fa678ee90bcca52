"""`p[i] += x` in reverse mode: the location's adjoint passes through unchanged.

The reverse of `v = load p; w = v + x; store w, p` takes the adjoint of w out of p's shadow
(reading it and zeroing the location), hands it to v and x, and the load's reverse adds v's
adjoint back into p's shadow: the shadow ends where it started, and x's adjoint gets it. When
LLVM cannot see that the reload reads the zero just stored (an add into another shadow in
between may alias it, as in the reverse of a triangular matrix-vector product), the pair costs a
store, a reload and an add per element. For such an increment the store's reverse only reads the
shadow, and the load's reverse adds nothing.

Exact when v's only use is the add (fadd, fsub with v first, fmuladd/fma with v as the addend),
the add's only use is the store, both through the same pointer value in one block, and nothing
between them writes memory: then the adjoint the load would add back is exactly what the store
took, and no reverse in between reads or writes that location's shadow through a store's rule.
"""
from __future__ import annotations

_ADDEND = {"fadd": (0, 1), "fsub": (0,)}        # operand positions that may be the old value
_PURE_CALLS = ("@llvm.fmuladd.", "@llvm.fma.")


def _use_counts(fn) -> dict:
    counts = {}
    for inst in fn.insts():
        for o in inst.ops:
            if o.is_local:
                counts[o.value] = counts.get(o.value, 0) + 1
        for v, _ in inst.incoming:
            counts[v] = counts.get(v, 0) + 1
    return counts


def pairs(synth) -> dict:
    """id(store) -> load and id(load) -> store for every increment of the function (cached)."""
    cache = synth.__dict__.get("_increments")
    if cache is not None:
        return cache
    cache = synth._increments = {}
    fn = synth.fn
    uses = _use_counts(fn)
    for b in fn.blocks:
        pos = {id(i): k for k, i in enumerate(b.insts)}
        for st in b.insts:
            if st.op != "store" or "volatile" in st.toks or "atomic" in st.toks:
                continue
            val, ptr = st.ops
            op = fn.defs.get(val.value)
            if getattr(op, "op", None) is None or getattr(op, "block", None) is not b or \
                    uses.get(val.value) != 1:
                continue
            if op.op in _ADDEND:
                olds = [op.ops[k].value for k in _ADDEND[op.op]]
            elif op.op == "call" and (op.callee or "").startswith(_PURE_CALLS):
                olds = [op.ops[2].value]
            else:
                continue
            for v in olds:
                ld = fn.defs.get(v)
                if getattr(ld, "op", None) != "load" or ld.block is not b or \
                        ld.ops[0].value != ptr.value or uses.get(v) != 1 or \
                        "volatile" in ld.toks or "atomic" in ld.toks or ld.ty != val.ty:
                    continue
                between = b.insts[pos[id(ld)] + 1:pos[id(st)]]
                if all(_writes_nothing(i) for i in between):
                    cache[id(st)] = ld
                    cache[id(ld)] = st
                    break
    return cache


def _writes_nothing(inst) -> bool:
    if inst.op in ("store", "invoke", "atomicrmw", "cmpxchg", "fence", "va_arg"):
        return False
    return inst.op != "call" or (inst.callee or "").startswith(_PURE_CALLS)


def of_store(synth, inst):
    """The load whose value the store increments (None: not an increment)."""
    load = pairs(synth).get(id(inst))
    if load is None or id(load) in getattr(synth, "accumulators", {}):
        return None
    return load if load.name in synth.act.active and inst.ops[0].value in synth.act.active \
        else None


def of_load(synth, inst) -> bool:
    """The load is the old value of an increment: its adjoint is never taken out of the shadow,
    so its reverse adds nothing."""
    st = pairs(synth).get(id(inst))
    return st is not None and st.op == "store" and of_store(synth, st) is inst
