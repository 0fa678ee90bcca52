"""Adjoints of loop-invariant loads accumulated in registers (docs/performance.md, item f).

The reverse of `x = load p` adds x's adjoint into the shadow of p: load / fadd / store of shadow
memory on every reverse iteration. When p is the same address in every iteration of a canonical
loop L, the reverse of L adds into an accumulator alloca instead (SROA makes it a phi in the
reverse loop), which starts at -0.0 (the identity of fadd, item e) wherever the reverse sweep
enters L (`_enter_loops`, the only way in: a loop's blocks have no predecessors outside it but
the header's, and a returning block is in no loop) and is added to the shadow once where the
reverse leaves L (the header's edge to the preheader, its only way out).

This is exact only if nothing else in the reverse of L reads that shadow while the sum is held
back: the reverse of a store, memcpy/memset, atomic or call reads (and zeroes) the shadow of
what it writes, so no such instruction of L may touch memory that may alias p's object
(MemoryInfo.may_alias on the primal objects: shadows alias as their primals do). Other loads'
adjoints are plain additions, which commute with the held-back sum. When aliasing cannot be
ruled out the load keeps the per-iteration update.
"""
from __future__ import annotations

from ..structure.type_layout import underlying
from enzyme_cc.ir.model import Inst
from enzyme_cc.rules.call_kinds import kind_of
from enzyme_cc.rules.instructions import align_of

# pure integer operations an invariant address may be computed with inside the loop (the reverse
# recomputes them from invariant operands)
_PURE_INT = {"add", "sub", "mul", "shl", "lshr", "ashr", "and", "or", "xor", "trunc", "zext",
             "sext"}
_PTR_CASTS = {"getelementptr", "bitcast", "addrspacecast"}


def plan_accumulators(synth) -> dict:
    """id(load) -> (loop header, accumulator alloca name) for the loads whose adjoint the
    reverse sweep accumulates in a register (the outermost canonical loop that qualifies)."""
    out = {}
    if synth.parallel:
        return out                   # a team's adjoints into shared memory are atomic adds
    loops = sorted(synth.loops.values(), key=lambda lp: -len(lp.blocks))
    for b in synth.fn.blocks:
        if b.label not in synth.reachable:
            continue
        for inst in b.insts:
            if not _candidate(synth, inst):
                continue
            addr = inst.ops[0].value
            for lp in loops:
                if b.label in lp.blocks and _invariant(synth, addr, lp) and \
                        not _conflicts(synth, addr, lp):
                    out[id(inst)] = (lp.header, synth.tmp("acc"))
                    break
    return out


def _candidate(synth, inst) -> bool:
    return inst.op == "load" and inst.name in synth.act.active and \
        inst.ty in ("double", "float") and synth.value_type(inst.name) == inst.ty and \
        "volatile" not in inst.flags and "atomic" not in inst.toks and \
        inst.ops[0].value.startswith(("%", "@"))


def _invariant(synth, v: str, lp, depth=0) -> bool:
    """v has the same value in every iteration of lp (defined outside it, or computed inside it
    by casts, GEPs and integer arithmetic from such values)."""
    d = synth.fn.defs.get(v)
    if not isinstance(d, Inst) or d.block.label not in lp.blocks:
        return True
    if depth > 16 or not (d.op in _PTR_CASTS or d.op in _PURE_INT and d.ty != "ptr"):
        return False
    return all(_invariant(synth, o.value, lp, depth + 1) for o in d.ops if o.is_local)


def _conflicts(synth, addr: str, lp) -> bool:
    """Some instruction of lp whose reverse reads or zeroes shadow memory may alias addr's."""
    fn, mem = synth.fn, synth.mem
    base = underlying(fn, addr)
    for label in lp.blocks:
        for inst in fn.block(label).insts:
            if inst.op in ("store", "atomicrmw", "cmpxchg"):
                ptr = inst.ops[1].value if inst.op == "store" else inst.ops[0].value
                if ptr in synth.act.shadowed and mem.may_alias(base, underlying(fn, ptr)):
                    return True
            elif inst.op in ("call", "invoke"):
                kind = kind_of(synth.gen, inst)
                if kind == "inactive":
                    continue
                if any("ptr" in o.ty and o.ty != "ptr" for o in inst.ops):
                    return True               # pointers in vectors or aggregates
                ptrs = [o.value for o in inst.ops if o.ty == "ptr"]
                if (inst.callee or "").startswith("@llvm.") and kind not in ("memcpy", "memset"):
                    # intrinsics: math on values, or markers (lifetime) of one object
                    if not ptrs or all(not mem.may_alias(base, underlying(fn, p)) for p in ptrs):
                        continue
                    return True
                if kind in ("memcpy", "memset") and all(
                        not mem.may_alias(base, underlying(fn, p)) for p in ptrs):
                    continue
                if kind == "rule" and not ptrs:
                    continue                  # libm on values
                return True                   # a callee's reverse may touch any shadow
    return False


def reset(synth, ctx, lp):
    """Where the reverse sweep enters lp: its accumulators start empty."""
    for ty, slot in _of_loop(synth, lp.header):
        ctx.lines.append(f"store {ty} -0.0, ptr {slot}")


def flush(synth, ctx, lp):
    """Where the reverse sweep leaves lp: each accumulator is added to its load's shadow (in the
    dry run this requests the shadow pointers for the header's reverse block)."""
    for inst, (h, slot) in _loads_of(synth, lp.header):
        sp = ctx.s(inst.ops[0].value)
        a, old, new = ctx.tmp("acc"), ctx.tmp("o"), ctx.tmp("n")
        al = align_of(inst)
        ctx.emit(f"{a} = load {inst.ty}, ptr {slot}")
        ctx.emit(f"{old} = load {inst.ty}, ptr {sp}{al}")
        ctx.emit(f"{new} = fadd {inst.ty} {old}, {a}")
        ctx.emit(f"store {inst.ty} {new}, ptr {sp}{al}")


def allocas(synth) -> list[str]:
    return [line for inst, (h, slot) in _loads_of(synth, None)
            for line in (f"{slot} = alloca {inst.ty}", f"store {inst.ty} -0.0, ptr {slot}")]


def _loads_of(synth, header):
    """[(load, (header, slot))] of the loop at `header` (None: all), in program order."""
    acc = getattr(synth, "accumulators", {})
    if not acc:
        return []
    if not hasattr(synth, "_acc_loads"):
        synth._acc_loads = [(i, acc[id(i)]) for i in synth.fn.insts() if id(i) in acc]
    return [(i, a) for i, a in synth._acc_loads if header is None or a[0] == header]


def _of_loop(synth, header):
    return [(inst.ty, slot) for inst, (h, slot) in _loads_of(synth, header)]
