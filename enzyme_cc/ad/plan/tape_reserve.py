"""Per-loop tape reservation (docs/performance.md, "d: the tape position in registers").

Every push checks that the tape has room (and grows it). For an innermost canonical loop whose
trip count is known when it is entered, the forward sweep instead reserves trip count x the bytes
one iteration pushes, once, at the end of the preheader, and the pushes inside the loop are
unchecked (Enzyme's per-loop caches, on our single LIFO tape, so callees and recursion stay
exact). The loop's exit block checks that the pushes stayed within the reservation: a miscounted
loop aborts instead of writing past the tape.

The trip count is taken from the latch's exit test only in the form LLVM leaves counted loops in
(LFTR): the latch is the only exiting block, and the loop continues while `p != N` or
`p.next != N`, p an integer header phi `init + k*step`, N loop-invariant. Then the number of
iterations is (N - init) / step (+1 when the test reads p): exact modulo 2^bits when |step| = 1,
and, for other steps, when the add carries nuw or nsw (a wrapping counter would be poison).
Loops with calls that are given the tape (augmented callees push on it) are left alone.

Computing a run-time count and checking it costs about 20 instructions per entry of the loop,
against 3 saved per iteration: GMM's hottest inner loop runs about 2 iterations per entry, and
GMM got 5-7 % slower (docs/performance.md). So a run-time count is used only for loops entered
once per gradient (in no enclosing cycle of a combined gradient; an augmented callee may be
called in a loop); a constant count (folded to one reservation of constant size) everywhere.
"""
from __future__ import annotations

import re

from ..structure.cfg import cyclic_blocks
from .tape_records import _slot

_TAPE_USE = re.compile(r"%ad\.tape(?![-\w.$\"])")
_PUSH = "@__enzyme_cc_push(ptr %ad.tape, "
_INT = re.compile(r"-?\d+")


def reserve_loops(synth, lines: list[str], ranges: dict) -> list[str]:
    """lines: the forward sweep; ranges: block label -> (start, end) in lines."""
    inserts = {}                                  # index -> lines to insert before it
    for lp in synth.loops.values():
        plan = _plan(synth, lp, lines, ranges)
        if plan is None:
            continue
        h = synth.r(lp.header)[1:]
        code, trips = plan
        per_iter = sum(_record_bytes(synth, synth.fn.block(b)) for b in lp.blocks)
        end = f"%ad.rsv.{h}"
        code += [f"%ad.rsvb.{h}.o = call {{ i64, i1 }} @llvm.umul.with.overflow.i64(i64 {trips}, "
                 f"i64 {per_iter})",
                 f"%ad.rsvb.{h}.v = extractvalue {{ i64, i1 }} %ad.rsvb.{h}.o, 0",
                 f"%ad.rsvb.{h}.f = extractvalue {{ i64, i1 }} %ad.rsvb.{h}.o, 1",
                 f"%ad.rsvb.{h} = select i1 %ad.rsvb.{h}.f, i64 -1, i64 %ad.rsvb.{h}.v",
                 f"{end} = call i64 @__enzyme_cc_reserve(ptr %ad.tape, i64 %ad.rsvb.{h})"]
        synth.gen.declare_raw("@llvm.umul.with.overflow.i64",
                              "declare { i64, i1 } @llvm.umul.with.overflow.i64(i64, i64)")
        inserts.setdefault(ranges[lp.preheader][1] - 1, []).extend(code)   # before its branch
        for b in lp.blocks:
            s, e = ranges[b]
            for k in range(s, e):
                if _PUSH in lines[k]:
                    lines[k] = lines[k].replace(_PUSH, "@__enzyme_cc_push_nc(ptr %ad.tape, ")
        (y,) = lp.exits
        s, e = ranges[y]
        preds = [p.label for p in synth.fn.block(y).preds]
        if preds != [lp.latch]:      # y is also entered from elsewhere: nothing to check then
            inc = ", ".join(f"[ {end if p == lp.latch else -1}, {synth.r(p)} ]" for p in preds)
            inserts.setdefault(s + 1, []).append(f"{end}.y = phi i64 {inc}")
            end += ".y"
        k = s + 1
        while k < e and " = phi " in lines[k]:
            k += 1
        inserts.setdefault(k, []).append(
            f"call void @__enzyme_cc_reserve_check(ptr %ad.tape, i64 {end})")
    if not inserts:
        return lines
    out = []
    for k, line in enumerate(lines):
        out.extend(inserts.get(k, ()))
        out.append(line)
    return out


def _record_bytes(synth, b) -> int:
    if b.label not in synth.plan:
        return 0
    return sum(_slot(ty, synth.module) for _, ty in synth._tape_items(b))


def _plan(synth, lp, lines, ranges):
    """(IR computing the trip count at the end of the preheader, its i64 value), or None."""
    fn = synth.fn
    if any(h != lp.header and h in lp.blocks for h in synth.loops) or len(lp.exits) != 1:
        return None
    if not any(_record_bytes(synth, fn.block(b)) for b in lp.blocks):
        return None
    (y,) = lp.exits
    if any(b not in ranges for b in lp.blocks) or y not in ranges or \
            lp.preheader not in ranges:
        return None
    if any(t not in lp.blocks for b in lp.blocks if b != lp.latch for t in fn.block(b).term.targets):
        return None
    for b in lp.blocks:                            # no call in the loop is given the tape
        s, e = ranges[b]
        if any(_TAPE_USE.search(x) and _PUSH not in x for x in lines[s:e]):
            return None
    if not _one_pass(fn, lp):
        return None                                # another cycle inside: not one pass per block
    term = fn.block(lp.latch).term
    if term.op != "br" or len(term.targets) != 2 or not term.ops:
        return None
    cond = fn.defs.get(term.ops[0].value)
    if getattr(cond, "op", None) != "icmp" or cond.pred not in ("eq", "ne"):
        return None
    stay_if_true = term.targets[0] == lp.header
    if (cond.pred == "ne") != stay_if_true:        # continue while the operands differ
        return None
    a, b = cond.ops
    for x, n in ((a, b), (b, a)):
        got = _counter(synth, lp, x.value)
        if got is not None and _invariant(synth, lp, n.value):
            phi, after = got
            return _trip_code(synth, lp, phi, after, n.value)
    return None


def _one_pass(fn, lp) -> bool:
    """Whether lp's blocks without the back edge are acyclic (each runs once per iteration)."""
    edges = {b: [t for t in fn.block(b).term.targets if t in lp.blocks and
                 (b, t) != (lp.latch, lp.header)] for b in lp.blocks}
    indeg = {b: 0 for b in lp.blocks}
    for b in edges:
        for t in edges[b]:
            indeg[t] += 1
    todo = [b for b, n in indeg.items() if n == 0]
    seen = 0
    while todo:
        b = todo.pop()
        seen += 1
        for t in edges[b]:
            indeg[t] -= 1
            if indeg[t] == 0:
                todo.append(t)
    return seen == len(lp.blocks)


def _counter(synth, lp, v):
    """(header phi, True when v is its next value) when v is an affine counter of lp."""
    fn = synth.fn
    if v in synth.affine and synth.affine[v][0] is lp and fn.defs[v].ty.startswith("i"):
        return v, False
    for phi in fn.block(lp.header).phis:
        if phi.name in synth.affine and synth.affine[phi.name][0] is lp and \
                phi.ty.startswith("i") and (v, lp.latch) in phi.incoming:
            return phi.name, True
    return None


def _invariant(synth, lp, v) -> bool:
    if not v.startswith("%"):
        return _INT.fullmatch(v) is not None
    d = synth.fn.defs.get(v)
    return d is not None and (not hasattr(d, "block") or d.block is None or
                              d.block.label not in lp.blocks)


def _trip_code(synth, lp, phi, after, n):
    fn = synth.fn
    _, init, step = synth.affine[phi]
    ty = fn.defs[phi].ty
    if not (init.startswith("%") or _INT.fullmatch(init)):
        return None
    k = abs(step)
    if k & (k - 1):
        # an odd or other non-power-of-two step reaches N modulo 2^bits after a number of steps
        # that is not (N - init) / step: only a counter that cannot wrap has that closed form
        nxt = fn.defs[next(v for v, b in fn.defs[phi].incoming if b == lp.latch)]
        if not ({"nuw", "nsw"} & set(nxt.flags)):
            return None
    h = synth.r(lp.header)[1:]
    t = f"%ad.trip.{h}"
    # iterations: (N - init) / k + 1 when the test reads p; ((N - init) - k) / k + 1 when it
    # reads p.next, modulo 2^bits (N == init there is a full wrap-around of the counter)
    if _INT.fullmatch(init) and _INT.fullmatch(n):
        mod = 1 << int(ty[1:])
        d = (int(n) - int(init) if step > 0 else int(init) - int(n)) % mod
        if d % k:
            return None                            # never reaches N: runs until it fails
        code = [f"{t}.t = add i64 {((d - k) % mod if after else d) // k + 1}, 0"]
    elif synth.mode != "combined" or \
            lp.header in cyclic_blocks(fn, skip_edge=(lp.latch, lp.header)):
        # entered many times per gradient (in a loop, or in an augmented callee that may be
        # called in one): computing the count costs more than the checks it saves when the loop
        # is short, as GMM's inner loops are (docs/performance.md)
        return None
    else:
        code = _runtime_count(synth, ty, t, init, n, step, after)
    # the preheader may branch around the loop (LLVM's unroller leaves such preheaders): the
    # count means nothing then, so nothing is reserved
    term = fn.block(lp.preheader).term
    if term.op != "br":
        return None
    if len(term.targets) == 1 or all(x == lp.header for x in term.targets):
        code.append(f"{t} = add i64 {t}.t, 0")
    else:
        c = synth.r(term.ops[0].value) if term.ops[0].value.startswith("%") else term.ops[0].value
        taken = (f"{t}.t", "0") if term.targets[0] == lp.header else ("0", f"{t}.t")
        code.append(f"{t} = select i1 {c}, i64 {taken[0]}, i64 {taken[1]}")
    return code, t


def _runtime_count(synth, ty, t, init, n, step, after) -> list[str]:
    r = (lambda v: synth.r(v) if v.startswith("%") else v)
    k = abs(step)
    hi, lo = (r(n), r(init)) if step > 0 else (r(init), r(n))
    code = [f"{t}.d = sub {ty} {hi}, {lo}"]
    q = f"{t}.d"
    if after:
        code.append(f"{t}.m = sub {ty} {t}.d, {k}")
        q = f"{t}.m"
    if k != 1:
        code.append(f"{t}.q = udiv {ty} {q}, {k}")
        q = f"{t}.q"
    code += [_zext(f"{t}.z", ty, q), f"{t}.n = add i64 {t}.z, 1",
             f"{t}.w = icmp eq i64 {t}.n, 0"]               # 2^64 iterations: never ends
    bad = f"{t}.w"
    if k != 1:       # N - init not a multiple of the step: the loop never ends (or is poison)
        code += [f"{t}.r = urem {ty} {t}.d, {k}", f"{t}.x = icmp ne {ty} {t}.r, 0",
                 f"{t}.b = or i1 {t}.w, {t}.x"]
        bad = f"{t}.b"
    code.append(f"{t}.t = select i1 {bad}, i64 -1, i64 {t}.n")   # -1: the reservation aborts
    return code


def _zext(dst, ty, v) -> str:
    return f"{dst} = add i64 {v}, 0" if ty == "i64" else f"{dst} = zext {ty} {v} to i64"
