"""Tape placement for loop-invariant values (docs/performance.md, "loop-invariant tape entries").

A value the reverse of block U reads from the tape is pushed at the end of U, once per execution
of U. When U lies in a canonical loop L that does not contain the value's definition, the value is
the same in every iteration of L: it is pushed once per execution of L instead, with the record of
the exit block L left by (every exit block of L pushes it), and that block's reverse, which runs
right before the reverse sweep enters L, stores it in a stack slot that every reverse iteration of
L reads. Forward [L's iterations][exit block's record], reverse [exit record][L's iterations]: the
tape stays LIFO. The outermost such loop is used (the value is invariant in all loops between).

Iteration records (iteration_records): a value defined in a block D of loop L and read by the
reverse of blocks U of the same iteration (a value at the top of the body read by both arms of a
branch) would be pushed by every such U. When D dominates L's latch and every path from each U
reaches the latch inside the iteration, the latch pushes it once, with its own record, and the
reverse of the latch, which starts each reverse iteration, stores it in a slot the reverse
blocks of that iteration read: fewer and smaller records, and one push per iteration instead of
one per block.
"""
from __future__ import annotations

from ..structure.cfg import cyclic_blocks, pred_edges
from .loop_accum import _invariant
from ..structure.loops import innermost_loops
from ..structure.type_layout import underlying


def hoist_loop(synth, key, user: str):
    """The outermost canonical loop containing block `user` but not the definition of `key` (or
    containing it, for a load that reads the same value in every iteration), such that the value
    is defined at every exit block of the loop (dominated by the definition, and not the
    definition's block itself, where a later execution would replace it)."""
    d = synth.def_block(key)
    if d is None:
        return None
    best = None
    for lp in synth.loops.values():
        inside = d in lp.blocks
        if user not in lp.blocks or inside and not _invariant_load(synth, key, lp) or \
                not _defined_at_exits(synth, d, lp):
            continue
        if best is None or len(lp.blocks) > len(best.blocks):
            best = lp
    return best


def _defined_at_exits(synth, d, lp) -> bool:
    """A value defined in block d can be pushed by every exit block of lp: d dominates it and is
    not that block, or d dominates the loop's edges into it (an exit block that also follows a
    bypass of the loop, such as the one a rotated loop's guard skips to, gets the value through
    a phi: exit_phis)."""
    for y in lp.exits:
        if y not in synth.reachable or d in synth.dom.get(y, ()) and y != d:
            continue
        if y == d or any(p.label in lp.blocks and d not in synth.dom.get(p.label, ())
                         for p in synth.fn.block(y).preds):
            return False
    return True


def _invariant_load(synth, key, lp) -> bool:
    """key is a load inside lp that reads the same value in every iteration: its address is
    invariant in lp and no instruction of lp may write its memory (a load LLVM left in the loop
    because it could not rule out the aliasing that MemoryInfo can, e.g. gradbench gmm's x[i]
    beside the stores to out[j])."""
    kind, v = key
    inst = synth.fn.defs.get(v) if kind == "p" else None
    if getattr(inst, "op", None) != "load" or "volatile" in inst.toks or "atomic" in inst.toks \
            or not _invariant(synth, inst.ops[0].value, lp):
        return False
    base, mem = underlying(synth.fn, inst.ops[0].value), synth.mem
    return not any(w.block.label in lp.blocks and
                   (bases is None or any(mem.may_alias(base, b) for b in bases))
                   for w, bases in mem.writers)


def hoist_tapes(synth):
    """Rewrite synth.plan: tape entries invariant in an enclosing loop become 'hoist' entries,
    read from synth.hoist_slots[(key, header)] in the reverse sweep; synth.exit_hoists[block]
    lists the (key, header) pairs the exit block pushes for the loops it leaves."""
    synth.hoist_slots = {}
    synth.hoist_of = {}
    synth.exit_hoists = {}
    synth.exit_phis = {}        # exit block -> key -> the loops whose edges carry it (poison off)
    for b in [b for b in synth.fn.blocks if b.label in synth.plan]:
        plan = synth.plan[b.label]
        for n, (k, how) in enumerate(plan):
            if how != "tape":
                continue
            lp = hoist_loop(synth, k, b.label)
            if lp is None:
                continue
            plan[n] = (k, "hoist")
            synth.hoist_of[(b.label, k)] = lp.header
            if (k, lp.header) not in synth.hoist_slots:
                synth.hoist_slots[(k, lp.header)] = synth.tmp("hslot")
                for y in sorted(lp.exits):
                    if y in synth.reachable:
                        synth.exit_hoists.setdefault(y, []).append((k, lp.header))
                        if synth.def_block(k) not in synth.dom.get(y, ()):
                            # (several loops may leave by y: the value comes from each of them)
                            synth.exit_phis.setdefault(y, {}).setdefault(k, []).append(lp)
    _share_hoisted(synth)
    _merge_equal_loads(synth)


def _merge_equal_loads(synth):
    """In-loop invariant loads of one address (the same pointer value and type) read the same
    value in every iteration of one run of the loop: LLVM's unrolling leaves such copies when it
    cannot rule out that the loop's stores alias them (gradbench gmm: x[i] eight times per
    unrolled iteration of Qtimesx). Only the first, whose block dominates the others', is pushed;
    the others read its slot. Keys that a block outside the loop also reads from the slot
    (_share_hoisted) keep their own."""
    outside = {(k, h) for (u, k), h in synth.hoist_of.items() if u not in synth.loops[h].blocks}
    groups = {}
    for (k, h) in list(synth.hoist_slots):
        lp, inst = synth.loops[h], synth.fn.defs.get(k[1]) if k[0] == "p" else None
        if (k, h) in outside or getattr(inst, "op", None) != "load" or \
                inst.block.label not in lp.blocks or not _invariant_load(synth, k, lp):
            continue
        groups.setdefault((h, inst.ops[0].value, inst.ty), []).append((synth.order[id(inst)], k))
    for (h, _, _), members in groups.items():
        members.sort()
        first = members[0][1]
        head = synth.def_block(first)
        for _, k in members[1:]:
            if head not in synth.dom.get(synth.def_block(k), ()):
                continue
            synth.hoist_slots[(k, h)] = synth.hoist_slots[(first, h)]
            for y in list(synth.exit_hoists):
                synth.exit_hoists[y] = [e for e in synth.exit_hoists[y] if e != (k, h)]
                if all(e[0] != k for e in synth.exit_hoists[y]):
                    synth.exit_phis.get(y, {}).pop(k, None)


def _share_hoisted(synth):
    """A tape entry of block U outside loop L whose value L pushes at its exits: when every path
    from U reaches one of those exits before the value's definition runs again, the reverse of U
    runs after the reverse of such an exit, whose slot still holds this value (GMM's prologue
    iteration before an unrolled loop reads the same row values as the loop)."""
    loops_of = {}
    for (k, h) in synth.hoist_slots:
        loops_of.setdefault(k, []).append(h)
    for u, plan in synth.plan.items():
        for n, (k, how) in enumerate(plan):
            if how != "tape" or k not in loops_of:
                continue
            for h in loops_of[k]:
                lp = synth.loops[h]
                bypassed = {y for y in lp.exits if k in synth.exit_phis.get(y, {})}
                if u not in lp.blocks and _always_reaches(synth, u, set(lp.exits),
                                                           synth.def_block(k), lp, bypassed):
                    plan[n] = (k, "hoist")
                    synth.hoist_of[(u, k)] = h
                    break


def _always_reaches(synth, u, targets, d, lp, bypassed) -> bool:
    """Every path from block u reaches a block of `targets` before block d or a return, and
    reaches one of `bypassed` (whose phi pushes poison off the loop) only from inside lp."""
    seen, todo = set(), [(u, t) for t in synth.fn.block(u).term.targets]
    if not todo:
        return False
    while todo:
        src, b = todo.pop()
        if b in bypassed and src not in lp.blocks:
            return False
        if b in targets or b in seen:
            continue
        if b == d or b == u:
            return False
        seen.add(b)
        succ = synth.fn.block(b).term.targets
        if not succ:
            return False          # a return (or unreachable) before the loop's exit
        todo.extend((b, t) for t in succ)
    return True


def exit_keys(synth, b) -> list:
    """Keys block b pushes for the loops it exits and, as a latch, for its iteration (after its
    own tape entries, no duplicates)."""
    own = {k for k, how in synth.plan.get(b.label, ()) if how == "tape"}
    out = []
    for k in [k for k, _ in synth.exit_hoists.get(b.label, ())] + \
            synth.latch_keys.get(b.label, []):
        if k not in own and k not in out:
            out.append(k)
    return out


def iteration_records(synth):
    """Rewrite synth.plan: tape entries of one loop iteration that its latch can push become
    'iter' entries, read from synth.iter_slots[(key, latch)]; synth.latch_keys[latch] lists
    them (see the module docstring)."""
    synth.iter_slots, synth.iter_of, synth.latch_keys = {}, {}, {}
    inner = innermost_loops(synth.loops)
    nested = {}                                # loop -> blocks in a cycle inside an iteration

    def fits(lp, u) -> bool:
        """u runs once per iteration of lp (its innermost loop) and reaches the latch."""
        if lp.header not in nested:
            nested[lp.header] = cyclic_blocks(synth.fn, skip_edge=(lp.latch, lp.header),
                                              within=lp.blocks)
        return inner.get(u) is lp and u not in nested[lp.header] and \
            _reaches_latch(synth, u, lp)
    for u, plan in synth.plan.items():
        for n, (k, how) in enumerate(plan):
            if how != "tape" or k[0] not in ("p", "s"):
                continue
            d = synth.def_block(k)
            lp = inner.get(d)
            if lp is None or not fits(lp, d) or not fits(lp, u) or \
                    d not in synth.dom.get(lp.latch, ()):
                continue
            plan[n] = (k, "iter")
            synth.iter_of[(u, k)] = lp.latch
            if (k, lp.latch) not in synth.iter_slots:
                synth.iter_slots[(k, lp.latch)] = synth.tmp("islot")
                synth.latch_keys.setdefault(lp.latch, []).append(k)


def _reaches_latch(synth, u, lp) -> bool:
    """Every path from block u reaches lp's latch without leaving lp or returning (a path that
    ends in `unreachable` never comes back to a reverse sweep)."""
    seen, todo = set(), [u]
    while todo:
        b = todo.pop()
        if b == lp.latch or b in seen:
            continue
        seen.add(b)
        blk = synth.fn.block(b)
        if blk.term.op != "unreachable" and not blk.term.targets:
            return False                       # a return inside the loop
        for t in blk.term.targets:
            if t not in lp.blocks or t == lp.header:
                return False
            todo.append(t)
    return True


def exit_phis(synth, b) -> list[str]:
    """Forward sweep, top of exit block b: the phis that carry a hoisted value from the loop's
    exit edges (poison from the edges that bypass the loop: the reverse of b then leaves
    by those edges and never reads the slot). Their names go to synth.exit_phi_names[b]."""
    names = synth.__dict__.setdefault("exit_phi_names", {}).setdefault(b.label, {})
    out = []
    for k, lps in synth.exit_phis.get(b.label, {}).items():
        val = synth._key_forward_name(k)
        inc = ", ".join(f"[ {val if any(p.label in lp.blocks for lp in lps) else 'poison'}, "
                        f"{synth.r(p.label)} ]" for p in pred_edges(b))
        names[k] = synth.tmp("xh")
        out.append(f"{names[k]} = phi {synth._key_type(k)} {inc}")
    return out


def store_hoisted(synth, ctx, b):
    """At the top of rev.b, after its pop: the values of the loops b exits, and of the iteration
    b is the latch of, go to their slots."""
    for k, h in synth.exit_hoists.get(b.label, ()):
        ctx.lines.append(f"store {synth._key_type(k)} {ctx.avail[k]}, ptr {synth.hoist_slots[(k, h)]}")
    for k in synth.latch_keys.get(b.label, ()):
        ctx.lines.append(f"store {synth._key_type(k)} {ctx.avail[k]}, ptr "
                         f"{synth.iter_slots[(k, b.label)]}")


def hoist_allocas(synth):
    slots = {slot: k for (k, _), slot in synth.hoist_slots.items()}   # merged loads share one
    slots.update({slot: k for (k, _), slot in synth.iter_slots.items()})
    return [f"{slot} = alloca {synth._key_type(k)}" for slot, k in slots.items()]
