"""Tape placement for loop-invariant values (docs/performance.md, "loop-invariant tape entries").

A value the reverse of block U reads from the tape is pushed at the end of U, once per execution
of U. When U lies in a canonical loop L that does not contain the value's definition, the value is
the same in every iteration of L: it is pushed once per execution of L instead, with the record of
the exit block L left by (every exit block of L pushes it), and that block's reverse, which runs
right before the reverse sweep enters L, stores it in a stack slot that every reverse iteration of
L reads. Forward [L's iterations][exit block's record], reverse [exit record][L's iterations]: the
tape stays LIFO. The outermost such loop is used (the value is invariant in all loops between).
"""
from __future__ import annotations


def hoist_loop(synth, key, user: str):
    """The outermost canonical loop containing block `user` but not the definition of `key`, such
    that the value is defined at every exit block of the loop (dominated by the definition, and
    not the definition's block itself, where a later execution would replace it)."""
    d = synth.def_block(key)
    if d is None:
        return None
    best = None
    for lp in synth.loops.values():
        if user not in lp.blocks or d in lp.blocks:
            continue
        exits = [y for y in lp.exits if y in synth.reachable]
        if any(y == d or d not in synth.dom.get(y, ()) for y in exits):
            continue
        if best is None or len(lp.blocks) > len(best.blocks):
            best = lp
    return best


def hoist_tapes(synth):
    """Rewrite synth.plan: tape entries invariant in an enclosing loop become 'hoist' entries,
    read from synth.hoist_slots[(key, header)] in the reverse sweep; synth.exit_hoists[block]
    lists the (key, header) pairs the exit block pushes for the loops it leaves."""
    synth.hoist_slots = {}
    synth.hoist_of = {}
    synth.exit_hoists = {}
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


def exit_keys(synth, b) -> list:
    """Keys block b pushes for the loops it exits (after its own tape entries, no duplicates)."""
    own = {k for k, how in synth.plan.get(b.label, ()) if how == "tape"}
    out = []
    for k, _ in synth.exit_hoists.get(b.label, ()):
        if k not in own and k not in out:
            out.append(k)
    return out


def store_hoisted(synth, ctx, b):
    """At the top of rev.b, after its pop: the values of the loops b exits go to their slots."""
    for k, h in synth.exit_hoists.get(b.label, ()):
        ctx.lines.append(f"store {synth._key_type(k)} {ctx.avail[k]}, ptr {synth.hoist_slots[(k, h)]}")


def hoist_allocas(synth):
    return [f"{slot} = alloca {synth._key_type(k)}" for (k, _), slot in synth.hoist_slots.items()]
