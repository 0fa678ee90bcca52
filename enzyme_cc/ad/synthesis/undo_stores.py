"""Stores the reverse sweep undoes, so that loads before them can be re-executed.

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

Stores in loops into the function's own memory (an alloca, or a malloc-family block that does
not escape, is not returned and whose free waits for the reverse sweep) are undone too when that
saves tape: the time-step loop of a simulation overwrites its node arrays once per node and step,
but its element loops gather each node's values eight times; taping the overwritten values
instead of the gathered ones costs one entry per node. The private copy of the function gets a
load of the old bytes before each such store (`with_old_loads`: an ordinary primal value, taped
by the value plan like any other); after the dry run, `select` keeps the stores whose undo lets
enough of the loads the reverse needs be re-executed (counted per object, over the function's
code), and the reverse of a kept store puts the old bytes back. The caller never sees
that memory, so nothing is redone at the end. In a split pair the reverse function runs after
the caller has gone on, so only heap blocks nothing outside the call sees qualify
(MemoryInfo.private_block: LULESH's equation-of-state scratch arrays, rewritten by every
repetition); stores run once per call are undone in combined mode only. A reload past such a
store is allowed where no path leads from the store to the reload's block without running the
load again (MemoryInfo.unmodified_after): every run of the store after the load is then undone
before the reload runs.
"""
from __future__ import annotations

import os
import re

from enzyme_cc.ir.model import Inst, parse_inst
from ..structure.cfg import cyclic_blocks
from .prepare import prepare
from ..plan.value_plan import recomputed_by_kind
from ..structure.type_layout import underlying
from enzyme_cc.rules.call_kinds import ALLOC, kind_of
from enzyme_cc.rules.instructions import align_of

OLD_PREFIX = "%ecc.undo."      # the loads of a loop store's old bytes (with_old_loads)


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
    """End of the reverse sweep: every undone store again, in forward order (the last wins).
    Loop stores write memory the caller never sees: not redone."""
    for inst in sorted((i for i in synth.mem.undo.values() if id(i) not in synth.loop_undone),
                       key=lambda i: synth.order[id(i)]):
        _store(synth, ctx, inst, synth.r(inst.ops[0].value))


# ---- stores in loops -------------------------------------------------------------------------
def _local_object(fn, ptr, heap_only: bool):
    d = fn.defs.get(underlying(fn, ptr))
    return isinstance(d, Inst) and (d.op == "alloca" and not heap_only or
                                    d.op == "call" and d.callee in ALLOC)


_FLOAT_DATA = re.compile(r"(double|float|<\d+ x (double|float)>)$")


def _loop_stores(fn, heap_only: bool):
    cyclic = cyclic_blocks(fn)
    return [i for b in fn.blocks if b.label in cyclic for i in b.insts
            if i.op == "store" and not i.flags and _FLOAT_DATA.match(i.ops[0].ty) and
            _local_object(fn, i.ops[1].value, heap_only)]


def undo_loops() -> bool:
    """ENZYME_CC_UNDO_LOOPS=0 tapes the loads instead (to measure; part of the AD cache key)."""
    return os.environ.get("ENZYME_CC_UNDO_LOOPS", "") != "0"


def with_old_loads(fn, module, mode: str):
    """fn, or where it has stores in loops into its own memory (in a split pair: heap blocks,
    the only ones that can be private to the call), a private copy of it with a load of each
    such store's old bytes just before it (fn.old_loads: id of the store -> the load's name)."""
    if not undo_loops():
        return fn
    heap_only = mode != "combined"
    fresh = module.fresh_function(fn.name) if _loop_stores(fn, heap_only) else None
    if fresh is None:
        return fn
    fn = prepare(fresh, module)
    fn.old_loads = {}
    for k, st in enumerate(_loop_stores(fn, heap_only)):
        name = f"{OLD_PREFIX}{k}"
        load = parse_inst(f"{name} = load {st.ops[0].ty}, ptr {st.ops[1].value}{align_of(st)}")
        load.line, load.line_end, load.md = st.line, st.line_end, dict(st.md)
        insts = st.block.insts
        insts.insert(next(j for j, x in enumerate(insts) if x is st), load)
        load.block, fn.defs[name] = st.block, load   # (not fn.index(): prepare's unique preds)
        fn.old_loads[id(st)] = name
    return fn


def _eligible(synth, mem):
    """The loop stores with an old-value load whose object the caller never sees and that stays
    allocated until the reverse sweep has run: {id(store): store}."""
    fn, old = synth.fn, getattr(synth.fn, "old_loads", {})
    if not old or synth.parallel:
        return {}
    returned = {mem._base(b.term.ops[0].value) for b in fn.blocks
                if b.term.op == "ret" and b.term.ops and b.term.ops[0].ty == "ptr"}
    # a free the forward sweep runs (the block has no shadow) ends the object before the reverse
    freed = {b for inst, bases in mem.writers if bases and inst.op in ("call", "invoke") and
             kind_of(synth.gen, inst) == "free" for b in bases}
    out = {}
    for inst in fn.insts():
        if id(inst) not in old or synth.noneed.drops_primal(inst):
            continue
        base = mem._base(inst.ops[1].value)
        # a split pair's reverse function runs after the caller has gone on: only a heap block
        # nothing outside the call sees is as the augmented forward left it
        if mem._identified_local(base) and base not in returned and base not in freed and \
                (synth.mode == "combined" or mem.private_block(base)):
            out[id(inst)] = inst
    return out


def select(synth):
    """After the dry run: the loop stores to undo (synth.loop_undone: id -> old-value load),
    per object those whose undo lets taped loads be re-executed, at least half as many as it
    undoes stores; the reverse of each reads the old value and the address (added to its
    block's needs)."""
    mem = synth.mem
    eligible = _eligible(synth, mem)
    synth.loop_undone = {}
    if not eligible:
        return
    fn, once = synth.fn, set(mem.undoable)
    by_object: dict = {}
    for i, st in eligible.items():
        by_object.setdefault(mem._base(st.ops[1].value), set()).add(i)
    taped = [(ld, u) for ld, u in _needed_loads(synth)
             if not ld.flags and synth.would_tape(ld.block.label, u)]
    chosen = set()
    for base, stores in by_object.items():
        loads = [(ld, u) for ld, u in taped if mem._base(ld.ops[0].value) == base and
                 not ld.name.startswith(OLD_PREFIX)]
        mem.undoable, mem.loop_undoable, mem.undo = once, set(), {}
        loads = [(ld, u) for ld, u in loads if not mem.unmodified_after(base, ld, u)]
        mem.undoable, mem.loop_undoable, mem.undo = once | stores, stores, {}
        # a load leaves the tape only if every reverse block that reads it can reload it
        users: dict = {}
        for ld, u in loads:
            users.setdefault(id(ld), (ld, []))[1].append(u)
        gained = 0
        for ld, us in users.values():
            mark = dict(mem.undo)
            if all(mem.unmodified_after(base, ld, u) for u in us):
                gained += 1
            else:
                mem.undo = mark
        used = stores & set(mem.undo)
        # counted in instructions of the code, not in runs: an unrolled update loop has several
        # copies of a store that each run fewer times, while a gather loop's loads run once per
        # element and node (several per node). Half as many loads as stores still keeps the
        # undo: at worst it tapes as much as it saves
        if gained and 2 * gained >= len(used):
            chosen |= used
    mem.undoable, mem.loop_undoable, mem.undo = once | chosen, chosen, {}
    for i, st in eligible.items():          # (in program order: the tape's layout)
        if i not in chosen:
            continue
        name = fn.old_loads[i]
        synth.loop_undone[i] = name
        needs = synth.needs[st.block.label]
        for v in (name, st.ops[1].value):
            if v.startswith("%") and ("p", v) not in needs:
                needs.append(("p", v))


def _needed_loads(synth):
    """(load, reverse block) pairs the reverse sweep may re-execute: the loads among the needs,
    and among the operands of values recomputed from theirs (by the kind of instruction alone,
    as the plan recomputes them, without asking the plan: its answers are memoized)."""
    out, seen = [], set()
    for label, keys in synth.needs.items():
        todo = [k[1] for k in keys if k[0] == "p"]
        while todo:
            v = todo.pop()
            d = synth.fn.defs.get(v)
            if (v, label) in seen or not isinstance(d, Inst) or v in synth.affine:
                continue
            seen.add((v, label))
            if d.op == "load":
                out.append((d, label))
            elif recomputed_by_kind(d):
                todo.extend(o.value for o in d.ops if o.is_local)
    return out


def restore_loop(synth, ctx, inst):
    """Where a loop store's reverse runs: its old bytes back."""
    ctx.lines.append(f"store {inst.ops[0].ty} {ctx.p(synth.loop_undone[id(inst)])}, "
                     f"ptr {ctx.p(inst.ops[1].value)}{align_of(inst)}")
