"""OpenMP reverse mode: the range tracking of loads in counted loops, once per loop entry.

The team version of a region's forward sweep records, per address class, the range of shadow
addresses its loads' adjoints will be added into (openmp_ranges.track_load). Per load that is a
few instructions on every iteration: the 2-thread gradient of a row-parallel stencil ran twice
the instructions of the serial one, so it did not speed up with threads.

A load inside a counted loop L (exit_count.recipe: its latch alone leaves it, the iteration count
follows from the exit compare) whose address is affine in L's iteration index k (sums, multiples
by values defined outside L and GEPs of L's affine header phis and of values defined outside L)
reads, over all iterations, addresses between its address at k = 0 and at the last k. Tracking
those two addresses at the end of L's preheader covers every iteration; where the loop leaves
early or the load is conditional it is a superset, which keeps more adds atomic and never fewer.
The preheader must branch to L's header only (it then runs exactly when L is entered), and the
addresses are recomputed without wrap flags (they are compared, never dereferenced).
"""
from __future__ import annotations

import os
import types

from enzyme_cc.ir.lexer import type_size
from ..structure import exit_count
from ..structure.loops import innermost_loops
from .openmp_classes import class_of, load_class, shared, track, track_span

_ARITH = ("add", "sub")


def plan(synth) -> dict:
    """{preheader label: [(load, loop)]} of the team derivative's hoisted loads (cached)."""
    cache = synth.__dict__.get("_omp_affine")
    if cache is not None:
        return cache
    cache, fn = {}, synth.fn
    synth._omp_affine = cache
    per_iteration = synth._omp_per_iteration = {}
    probe = types.SimpleNamespace(synth=synth)
    innermost = _innermost(synth)
    for lp in synth.loops.values():
        if not _counted(synth, lp):
            continue
        for label in sorted(lp.blocks):
            if innermost.get(label) is not lp:
                continue
            for inst in fn.block(label).insts:
                if inst.op != "load" or inst.name not in synth.act.active or \
                        not shared(probe, inst.ops[0].value):
                    continue
                chain = []
                if _affine(synth, lp, inst.ops[0].value, chain, set()) and \
                        root_of(synth, lp, inst.ops[0].value, chain) in synth.act.shadowed:
                    k = load_class(synth, inst.ops[0].value)  # fixed before the sweeps ask
                    cache.setdefault(lp.preheader, []).append((inst, lp, chain))
                    trips = _short_trips(synth, lp)
                    if trips and _runtime_stride(synth, lp, chain):
                        per_iteration[id(inst)] = [k] + [class_of(synth, ("iteration", k, j))
                                                         for j in range(1, trips)]
    synth._omp_hoisted = {id(i) for loads in cache.values() for i, _, _ in loads}
    lifted = synth._omp_lifted = {}
    for loads in cache.values():
        for inst, lp, chain in loads:
            up = None if id(inst) in per_iteration else _lift(synth, innermost, inst, lp, chain)
            if up is not None:
                lifted.setdefault(up[0].preheader, []).append((inst, lp, chain) + up)
    synth._omp_lifted_ids = {id(t[0]) for ts in lifted.values() for t in ts}
    return cache


def _lift(synth, innermost, inst, lp, chain):
    """(outer loop, its chain, the root outside it) where load inst, hoisted to lp's preheader,
    can be tracked once where the loop around that preheader is entered: that loop is counted,
    lp's trip count does not change in it, and what inst's address takes from outside lp (lp's
    phis' starts, the root) is affine in it, so that the address is affine in both indices and
    its extremes over the nest lie at the four corners. An element loop reading its element's
    own block of a shared array in a loop over components (hydro's corner forces) then tracks
    one span per thread's chunk, not one per element."""
    outer = innermost.get(lp.preheader)
    if outer is None or not _counted(synth, outer):
        return None
    r = exit_count.recipe(synth, ("ivx", (lp.header, None)))
    if any(v.startswith("%") and inside(synth, outer, v) for v in (r.init, r.bound)):
        return None
    names, ins = {d.name for d in chain}, []
    for v in [inst.ops[0].value] + [o.value for d in chain for o in d.ops]:
        a = synth.affine.get(v)
        if a is not None and a[0] is lp:
            v = a[1]
        if v.startswith("%") and v not in names:
            ins.append(v)
    chain2, seen = [], set()
    if not all(_affine(synth, outer, v, chain2, seen) for v in ins):
        return None
    root = root_of(synth, outer, root_of(synth, lp, inst.ops[0].value, chain), chain2)
    if not root.startswith("%") or inside(synth, outer, root) or root not in synth.act.shadowed:
        return None
    return outer, chain2, root


def _counted(synth, lp) -> bool:
    """lp's preheader branches to its header only and its exit count follows from its exit
    compare (exit_count.recipe): addresses at its last iteration can be computed before it."""
    pre = synth.fn.block(lp.preheader)
    return pre.term.op == "br" and pre.term.targets == [lp.header] and \
        exit_count.recipe(synth, ("ivx", (lp.header, None))) is not None


def iteration_classes(synth, inst):
    """The classes of load inst's iterations when it is tracked one class per iteration: a load
    in a loop of at most MAX_TRIPS iterations whose address moves by a stride known only at run
    time, as `u[d * nn + node]` over the d = 0..2 components of a node array kept in one block:
    one range from the first to the last iteration would span all components, and overlap the
    other threads' ranges of every component. None for any other load."""
    plan(synth)
    return synth.__dict__.get("_omp_per_iteration", {}).get(id(inst))


MAX_TRIPS = 4


def _short_trips(synth, lp):
    """The iteration count of lp when its exit test compares constants and it is 2..MAX_TRIPS."""
    r = exit_count.recipe(synth, ("ivx", (lp.header, None)))
    try:
        init, bound = int(r.init), int(r.bound)
    except (AttributeError, ValueError):
        return None
    d = bound - init
    if r.pred == "ne":
        if d % r.step or d // r.step <= 0:
            return None
        last = d // r.step - (1 if r.on_next else 0)
    else:
        c = -(-abs(d) // abs(r.step)) if (d > 0) == (r.step > 0) else 0
        last = max(c - (1 if r.on_next else 0), 0)
    return last + 1 if 2 <= last + 1 <= MAX_TRIPS else None


def _runtime_stride(synth, lp, chain) -> bool:
    """The address computed by chain moves per iteration of lp by a multiple of a run-time
    value (a `mul` by a value defined outside lp)."""
    return any(d.op == "mul" and any(o.value.startswith("%") and not inside(synth, lp, o.value)
                                     for o in d.ops) for d in chain)


def range_check() -> bool:
    """ENZYME_CC_OMP_RANGE_CHECK=1 when the derivative is built: every hoisted load checks, on
    every iteration, that its shadow address lies in the range its preheader tracked (a test
    of this module: an address outside aborts the program)."""
    return os.environ.get("ENZYME_CC_OMP_RANGE_CHECK", "") not in ("", "0")


def hoisted(synth, inst) -> bool:
    """The load's range is tracked in its loop's preheader (openmp_ranges skips it)."""
    plan(synth)
    return id(inst) in synth._omp_hoisted


def gathers(synth, inst) -> bool:
    """A load tracked where it runs whose address is not affine in the innermost loop holding
    it (an index read from memory, a modulo, a select of pointers) or that lies in no loop: its
    addresses may form two runs (a periodic neighbour list: the thread's block and the far end
    of the array), and it is recorded in its class's two ranges. Other loads tracked where they
    run move through their array in one run: a min and a max, cheaper in a loop that tracks
    many (hydrodynamics' gathered corners)."""
    innermost = _innermost(synth)
    lp = innermost.get(inst.block.label)
    return lp is None or not _nest_affine(synth, innermost, lp, inst.ops[0].value)


def _innermost(synth) -> dict:
    """innermost_loops of synth's function (cached: asked once per tracked load)."""
    if "_omp_innermost" not in synth.__dict__:
        synth._omp_innermost = innermost_loops(synth.loops)
    return synth._omp_innermost


def _nest_affine(synth, innermost, lp, v) -> bool:
    """v is affine in lp's index, and what it takes from outside lp (the start of lp's index
    among it) is affine in the enclosing loop's in turn, up to values fixed for the call: the
    nest's addresses move in one run. A loop entered once per neighbour box, at an index read
    from a neighbour table (CoMD's pair loop), does not."""
    chain = []
    if not _affine(synth, lp, v, chain, set()):
        return False
    outer = innermost.get(lp.preheader)
    if outer is None:
        return True
    used = {o.value for d in chain for o in d.ops} | {v}
    outs = {u for u in used if u.startswith("%") and not inside(synth, lp, u)}
    outs |= {synth.affine[u][1] for u in used if u in synth.affine and synth.affine[u][0] is lp}
    return all(_nest_affine(synth, innermost, outer, u) for u in outs
               if u.startswith("%") and inside(synth, outer, u))


def loop_of(synth, inst):
    """The loop in whose preheader load inst's range is tracked (None: not hoisted)."""
    if not hoisted(synth, inst):
        return None
    return next(lp for loads in plan(synth).values() for i, lp, _ in loads if i is inst)


def inside(synth, lp, v) -> bool:
    """v is defined by an instruction of lp."""
    d = synth.fn.defs.get(v) if v.startswith("%") else None
    return getattr(getattr(d, "block", None), "label", None) in lp.blocks


def _affine(synth, lp, v, chain, seen) -> bool:
    """v is affine in lp's iteration index; the instructions inside lp it is computed by are
    appended to chain in definition order (lp's header phis excepted: they are substituted)."""
    if not inside(synth, lp, v) or v in seen:
        return True
    d = synth.fn.defs[v]
    if d.op == "phi":
        a = synth.affine.get(v)
        ok = a is not None and a[0] is lp
    elif d.op in _ARITH or d.op == "or" and "disjoint" in d.flags:
        ok = all(_affine(synth, lp, o.value, chain, seen) for o in d.ops)
    elif d.op == "mul":                   # by a factor defined outside the loop
        ok = sum(inside(synth, lp, o.value) for o in d.ops) <= 1 and \
            all(_affine(synth, lp, o.value, chain, seen) for o in d.ops)
    elif d.op == "shl":
        ok = not inside(synth, lp, d.ops[1].value) and \
            _affine(synth, lp, d.ops[0].value, chain, seen)
    elif d.op in ("sext", "zext"):
        # no wrap below the extension: the operand's own operation says so
        src = synth.fn.defs.get(d.ops[0].value)
        need = {"nsw"} if d.op == "sext" else {"nuw"}
        ok = (d.op == "zext" and "nneg" in d.flags or
              getattr(src, "op", None) == "phi" or bool(need & set(getattr(src, "flags", ())))) \
            and _affine(synth, lp, d.ops[0].value, chain, seen)
    elif d.op == "getelementptr":
        ok = d.src_ty is not None and all(_affine(synth, lp, o.value, chain, seen) for o in d.ops)
    else:
        ok = False
    if ok and d.op != "phi":
        seen.add(v)
        chain.append(d)
    return ok


def emit(ctx, b, covered=()):
    """End of block b in a team derivative's forward sweep: for each loop b is the preheader
    of, track its hoisted loads' shadow addresses at the first and the last iteration (except
    the loads in covered, ids of those tracked by their rows' index: openmp_index._rows, and
    those lifted to an enclosing loop), and for each loop b is the preheader of as an enclosing
    loop, the spans of the loads lifted to it (_emit_lifted)."""
    synth = ctx.synth
    loads = plan(synth).get(b.label, ())
    _emit_lifted(ctx, synth._omp_lifted.get(b.label, ()))
    loads = [t for t in loads if id(t[0]) not in covered and id(t[0]) not in synth._omp_lifted_ids]
    if not loads:
        return
    lp = loads[0][1]
    last = exit_count.exit_index(synth, _Fwd(synth, ctx.lines), exit_count.recipe(
        synth, ("ivx", (lp.header, None))))
    for inst, lp, chain in loads:
        size = max(type_size(inst.ty, synth.module.named_types), 1)
        per_iteration = iteration_classes(synth, inst)
        if per_iteration:                   # each iteration's address in its own class
            for j, k in enumerate(per_iteration):
                sp = shadow_at(ctx, lp, chain, inst.ops[0].value, str(j), synth.r)
                ctx.emit(track(k, sp, size, True))
            continue
        k = load_class(synth, inst.ops[0].value)
        # the loop's loads cover what lies between the first and the last: one span
        ends = []
        for it in ("0", last):
            sp, a = shadow_at(ctx, lp, chain, inst.ops[0].value, it, synth.r), ctx.tmp("ta")
            ctx.emit(f"{a} = ptrtoint ptr {sp} to i64")
            ends.append(a)
        lo, hi, end = ctx.tmp("tl"), ctx.tmp("th"), ctx.tmp("te")
        ctx.emit(f"{lo} = call i64 @llvm.umin.i64(i64 {ends[0]}, i64 {ends[1]})")
        ctx.emit(f"{hi} = call i64 @llvm.umax.i64(i64 {ends[0]}, i64 {ends[1]})")
        ctx.emit(f"{end} = add i64 {hi}, {size}")
        ctx.emit(track_span(k, lo, end))


def _emit_lifted(ctx, loads):
    """End of an outer loop's preheader: each lifted load's shadow addresses at the four corners
    of the nest (the outer loop's first and last iteration, lp's first and last), one span."""
    synth, lasts = ctx.synth, {}

    def last(lp):
        if lp.header not in lasts:
            recipe = exit_count.recipe(synth, ("ivx", (lp.header, None)))
            lasts[lp.header] = exit_count.exit_index(synth, _Fwd(synth, ctx.lines), recipe)
        return lasts[lp.header]
    for inst, lp, chain, outer, chain2, root in loads:
        ends = []
        for o in ("0", last(outer)):
            prim = at_iteration(ctx, outer, chain2, o, synth.r)   # what lp takes, at o
            for it in ("0", last(lp)):
                a, sp = ctx.tmp("ta"), shadow_at(ctx, lp, chain, inst.ops[0].value, it, prim, root)
                ctx.emit(f"{a} = ptrtoint ptr {sp} to i64")
                ends.append(a)
        lo, hi = ends[0], ends[0]
        for e in ends[1:]:
            lo2, hi2 = ctx.tmp("tl"), ctx.tmp("th")
            ctx.emit(f"{lo2} = call i64 @llvm.umin.i64(i64 {lo}, i64 {e})")
            ctx.emit(f"{hi2} = call i64 @llvm.umax.i64(i64 {hi}, i64 {e})")
            lo, hi = lo2, hi2
        end = ctx.tmp("te")
        ctx.emit(f"{end} = add i64 {hi}, {max(type_size(inst.ty, synth.module.named_types), 1)}")
        ctx.emit(track_span(load_class(synth, inst.ops[0].value), lo, end))


class _Fwd:
    """What exit_count.exit_index reads: forward-sweep names of primal values, and the lines."""

    def __init__(self, synth, lines):
        self.synth, self.lines = synth, lines
        self.avail = self

    def get(self, key, default):
        return self.synth.r(key[1]) if key[1].startswith("%") else default


def shadow_at(ctx, lp, chain, ptr, it, prim, root=None):
    """The shadow of ptr at iteration it (an i64 value): the address recomputed from lp's phis at
    that iteration, moved from its root pointer (defined outside lp, or the given root outside
    an enclosing loop) to the root's shadow. prim(v): the sweep's name of a primal value defined
    outside lp."""
    synth = ctx.synth
    val = at_iteration(ctx, lp, chain, it, prim)
    if root is None:
        root = root_of(synth, lp, ptr, chain)
        base = prim(root) if root.startswith("%") else root
    else:
        base = synth.r(root)
    p = val(ptr)
    a, r, off, sp = (ctx.tmp(h) for h in ("ha", "hr", "ho", "hs"))
    ctx.emit(f"{a} = ptrtoint ptr {p} to i64")
    ctx.emit(f"{r} = ptrtoint ptr {base} to i64")
    ctx.emit(f"{off} = sub i64 {a}, {r}")
    ctx.emit(f"{sp} = getelementptr i8, ptr {ctx.s(root)}, i64 {off}")
    return sp


def at_iteration(ctx, lp, chain, it, prim):
    """The sweep's name of each value at lp's iteration it (an i64 value), as a function: the
    values of chain recomputed (emitted now, without wrap flags), lp's affine phis at it, any
    other value prim(v) (defined outside lp)."""
    names = {}

    def val(v):
        if not v.startswith("%"):
            return v
        if v not in names:
            a = ctx.synth.affine.get(v)
            names[v] = _phi_at(ctx, v, a, it, prim) if a is not None and a[0] is lp else prim(v)
        return names[v]
    for d in chain:
        names[d.name] = clone_inst(ctx, d, val)
    return val


def root_of(synth, lp, ptr, chain):
    """The pointer defined outside lp that ptr is an offset from (through GEPs, or a pointer phi
    of lp and its start)."""
    in_chain = {d.name for d in chain}
    root = ptr
    while root in in_chain and synth.fn.defs[root].op == "getelementptr":
        root = synth.fn.defs[root].ops[0].value
    a = synth.affine.get(root)
    if a is not None and a[0] is lp:       # a pointer iterator of lp
        root = a[1]
    return root


def _phi_at(ctx, v, a, it, prim):
    _, init, step = a
    start = prim(init) if init.startswith("%") else init
    if it == "0":
        return start
    return exit_count.affine_value(ctx.synth, ctx.emit, ctx.synth.fn.defs[v].ty, start, step, it)


def clone_inst(ctx, d, val):
    """d recomputed from val(operands), without wrap or inbounds flags."""
    out = ctx.tmp("hc")
    ops = [f"{o.ty} {val(o.value)}" for o in d.ops]
    if d.op == "getelementptr":
        ctx.emit(f"{out} = getelementptr {d.src_ty}, {', '.join(ops)}")
    elif d.op in ("sext", "zext", "trunc"):
        ctx.emit(f"{out} = {d.op} {ops[0]} to {d.ty}")
    else:
        op = "add" if d.op == "or" else d.op
        ctx.emit(f"{out} = {op} {d.ty} {val(d.ops[0].value)}, {val(d.ops[1].value)}")
    return out
