"""Stores the reverse sweep undoes, so that loads before them can be re-executed (combined mode).

A load may be re-executed in the reverse sweep instead of taped when nothing that may write its
memory runs after it (`MemoryInfo.unmodified_after`). A typical gradient ends with `*out = sum`,
and `out` is a parameter that may alias the inputs as far as the IR tells: that one store made
every load of the inputs taped (GMM's `ltri` loads: 56 % of its tape). Two ways past such a store:

- a write the forward sweep leaves out (enzyme_dupnoneed, noneed.py) never runs: it is no writer;
- a plain store that runs exactly once per call (a block in no cycle that dominates each return),
  into the caller's memory or a global, whose address and value are available to the reverse
  sweep as they are, is undone: the forward sweep loads the bytes it overwrites just before it,
  the reverse sweep stores them back where the store's reverse runs (the reverse visits stores in
  the opposite order, so each reload sees memory as its load did), and stores the value again
  when the sweep ends, so the caller sees the primal result. Memory the function allocates is
  left out: its reverse may free it before the sweep ends.
"""
from __future__ import annotations

from enzyme_cc.ir.model import Inst
from .type_layout import underlying
from enzyme_cc.rules.instructions import align_of


def plan(synth):
    """Tell the function's MemoryInfo which writes do not count for reloads."""
    mem = synth.mem
    mem.undoable = _undoable(synth)
    mem.dropped = {id(i) for i, _ in mem.writers if synth.noneed.drops_primal(i)}


def _undoable(synth) -> set:
    fn = synth.fn
    if synth.parallel or not synth.rets:
        return set()

    def available(v):
        d = fn.defs.get(v)
        return not v.startswith("%") or not isinstance(d, Inst) or synth.runs_once(d.block.label)

    params = {p.name for p in fn.params}

    def outside(ptr):
        u = underlying(fn, ptr)
        return u in params or u.startswith("@")

    out = set()
    for b in fn.blocks:
        if b.label not in synth.reachable or not synth.runs_once(b.label):
            continue
        for inst in b.insts:
            if inst.op == "store" and not inst.flags and not synth.noneed.drops_primal(inst) \
                    and all(available(o.value) for o in inst.ops) and outside(inst.ops[1].value):
                out.add(id(inst))
    return out


def _store(synth, ctx, inst, val):
    ctx.lines.append(f"store {inst.ops[0].ty} {val}, ptr {synth.r(inst.ops[1].value)}"
                     f"{align_of(inst)}")


def save_old(synth, ctx, inst):
    """Forward sweep, just before the undone store: the bytes it overwrites."""
    old = synth.tmp("undo")
    synth.undo_old[id(inst)] = old
    ctx.lines.append(f"{old} = load {inst.ops[0].ty}, ptr {synth.r(inst.ops[1].value)}"
                     f"{align_of(inst)}")


def restore_old(synth, ctx, inst):
    """Where the store's reverse runs: put the old bytes back."""
    _store(synth, ctx, inst, synth.undo_old[id(inst)])


def redo(synth, ctx):
    """End of the reverse sweep: every undone store again, in forward order (the last wins)."""
    for inst in sorted(synth.mem.undo.values(), key=lambda i: synth.order[id(i)]):
        _store(synth, ctx, inst, synth.r(inst.ops[0].value))
