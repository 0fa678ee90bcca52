"""A loop's exit count recomputed from its exit compare instead of taped (issue 12, item b).

Entering a loop backwards needs the index k of the iteration that left it (an `ivx` key, see
reverse.py). When the loop's only exiting block is its latch and the latch decides on an affine
header phi p = init + k * step (or its increment p.next) against a bound N defined outside the
loop, k follows from init and N:

- the loop goes on while `x != N` (LLVM's canonical counted loop): x reaches N exactly, so with
  x = p.next, k = (N - init) / step - 1, and with x = p, k = (N - init) / step;
- it goes on while `x < N` counting up (or `x > N` counting down, step < 0), signed or unsigned:
  k is the first iteration whose x is past N: d = |N - init|, c = ceil(d / |step|), k = c - 1
  (p.next) or c (p), and k = 0 when init is already past N (the body ran once before the test).

That costs a few integer operations where the tape cost 8 bytes per loop entry; the caller uses
it only when init and N reach the reverse block with no tape or slot at all (Synth.free_at).

A counter widened to i64 whose test compares its truncation with `!=` (`trunc %i.next to i32`
against an int bound, LLVM's exit test after widening an int counter, as in every OpenMP loop
over an int index) counts modulo 2^32 from the truncated start, step 1 or -1 only.

Exactness needs a counter that does not wrap before the test holds: `!=` on an i64 counter (a
wrap takes 2^62 iterations) or on a pointer (compared as addresses, step in bytes), otherwise an
increment with nuw or nsw (a wrap would be poison); an inequality needs the flag matching its
signedness (`samesign` compares both ways).
"""
from __future__ import annotations

from dataclasses import dataclass

NEGATE = {"eq": "ne", "ne": "eq", "ult": "uge", "uge": "ult", "ugt": "ule", "ule": "ugt",
          "slt": "sge", "sge": "slt", "sgt": "sle", "sle": "sgt"}
SWAP = {"eq": "eq", "ne": "ne", "ult": "ugt", "ugt": "ult", "ule": "uge", "uge": "ule",
        "slt": "sgt", "sgt": "slt", "sle": "sge", "sge": "sle"}


@dataclass(frozen=True)
class Recipe:
    on_next: bool        # the test reads p.next (else p)
    init: str
    bound: str
    step: int            # in units of the counter (bytes for a pointer)
    ty: str              # the counter's type
    pred: str            # "ne", or the continue-while predicate with the counter on the left
    wide: str = ""       # the counter's own type where the test reads it truncated to ty


def recipe(synth, key):
    """The Recipe for ("ivx", (header, exit)) (the same for every exit of the loop), or None."""
    cache = synth.__dict__.setdefault("_exit_count", {})
    h = key[1][0]
    if h not in cache:
        cache[h] = _find(synth, synth.loops[h])
    return cache[h]


def _find(synth, lp):
    fn = synth.fn
    exiting = [b for b in lp.blocks if any(t not in lp.blocks for t in fn.block(b).term.targets)]
    term = fn.block(lp.latch).term
    if exiting != [lp.latch] or term.op != "br" or len(term.ops) != 1 or len(term.targets) != 2:
        return None
    cmp = fn.defs.get(term.ops[0].value)
    if getattr(cmp, "op", None) != "icmp" or cmp.pred not in NEGATE:
        return None
    stay = cmp.pred if term.targets[0] in lp.blocks else NEGATE[cmp.pred]
    for a, n, pred in ((cmp.ops[0].value, cmp.ops[1].value, stay),
                       (cmp.ops[1].value, cmp.ops[0].value, SWAP[stay])):
        if not _invariant(fn, lp, n):
            continue
        for phi in fn.block(lp.header).phis:
            aff = synth.affine.get(phi.name)
            if aff is None or aff[2] == 0:
                continue
            nxt = next(v for v, b in phi.incoming if b == lp.latch)
            if a in (phi.name, nxt) and _exact(pred, aff[2], phi.ty, fn.defs[nxt], cmp):
                return Recipe(a == nxt, aff[1], n, aff[2], phi.ty, pred)
            t = fn.defs.get(a) if a.startswith("%") else None
            if getattr(t, "op", None) == "trunc" and t.ops[0].value in (phi.name, nxt) and \
                    pred == "ne" and abs(aff[2]) == 1 and phi.ty == "i64":
                return Recipe(t.ops[0].value == nxt, aff[1], n, aff[2], t.ty, pred, "i64")
    return None


def _exact(pred, step, ty, inc, cmp) -> bool:
    flags = set(inc.flags)
    if pred == "ne":
        return ty in ("i64", "ptr") or ty.startswith("i") and bool({"nuw", "nsw"} & flags)
    if not ty.startswith("i") or pred not in ("ult", "slt", "ugt", "sgt") or \
            (step > 0) != (pred in ("ult", "slt")):
        return False
    need = {"nuw"} if pred[0] == "u" else {"nsw"}
    if "samesign" in cmp.flags:
        need = {"nuw", "nsw"}
    return bool(need & flags)


def _invariant(fn, lp, v) -> bool:
    d = fn.defs.get(v)
    return not v.startswith("%") or getattr(getattr(d, "block", None), "label", None) not in lp.blocks


def deps(synth, key):
    r = recipe(synth, key)
    return [("p", x) for x in (r.init, r.bound) if x.startswith("%")]


def emit(synth, ctx, key):
    """The exiting iteration's index as an i64, computed in the reverse block."""
    ctx.avail[key] = exit_index(synth, ctx, recipe(synth, key))


# ---- exit values ------------------------------------------------------------------------------
# An affine header phi p of loop L (or its increment p.next) read after L exits holds its value of
# L's last iteration k: init_p + k * step_p (+ step_p for p.next), k from L's exit count above.
# That is LLVM's `x.lcssa` / `x.next.3` after unrolling: the start of the epilogue loop.

def exit_value_form(synth, v):
    """(loop, phi, on_next) when v is an affine header phi of a loop with an exit Recipe, or its
    increment; else None."""
    d = synth.fn.defs.get(v) if v.startswith("%") else None
    blk = getattr(d, "block", None)
    if blk is None:
        return None
    for lp in synth.loops.values():
        if blk.label not in lp.blocks:
            continue
        for phi in synth.fn.block(lp.header).phis:
            if phi.name not in synth.affine:
                continue
            nxt = next(x for x, b in phi.incoming if b == lp.latch)
            if v in (phi.name, nxt) and recipe(synth, ("ivx", (lp.header, None))) is not None:
                return lp, phi, v == nxt
    return None


def value_inputs(synth, v) -> list:
    """The values an exit value is computed from (L's init and bound, the phi's start)."""
    lp, phi, _ = exit_value_form(synth, v)
    r = recipe(synth, ("ivx", (lp.header, None)))
    return [x for x in dict.fromkeys((r.init, r.bound, synth.affine[phi.name][1]))
            if x.startswith("%")]


def exit_value(synth, v, user):
    """exit_value_form(v) when the reverse block of `user`, outside the loop, would otherwise
    tape it and can compute it with no tape or slot; else None."""
    cache = synth.__dict__.setdefault("_exit_values", {})
    if (v, user) not in cache:
        cache[(v, user)] = None
        form = exit_value_form(synth, v)
        if form is not None and user is not None and user not in form[0].blocks and \
                synth.would_tape(synth.fn.defs[v].block.label, user) and all(
                synth.free_at(("p", x), user) for x in value_inputs(synth, v)):
            cache[(v, user)] = form
    return cache[(v, user)]


def emit_value(synth, ctx, key):
    lp, phi, on_next = exit_value(synth, key[1], ctx.block.label)
    k = exit_index(synth, ctx, recipe(synth, ("ivx", (lp.header, None))))
    _, init, step = synth.affine[phi.name]
    if on_next:
        k1 = synth.tmp("xn")
        ctx.lines.append(f"{k1} = add i64 {k}, 1")
        k = k1
    ctx.avail[key] = affine_value(synth, ctx.lines.append, phi.ty, ctx.avail.get(("p", init), init),
                                  step, k)


def affine_value(synth, emit, ty: str, start: str, step: int, k: str) -> str:
    """start + k * step, the value of an affine header phi of type ty (a pointer: step in bytes)
    in iteration k (an i64)."""
    new, off = synth.tmp("xv"), synth.tmp("xo")
    if ty == "ptr":
        emit(f"{off} = mul i64 {k}, {step}")
        emit(f"{new} = getelementptr i8, ptr {start}, i64 {off}")
        return new
    if ty != "i64":
        t = synth.tmp("xt")
        emit(f"{t} = trunc i64 {k} to {ty}")
        k = t
    emit(f"{off} = mul {ty} {k}, {step}")
    emit(f"{new} = add {ty} {start}, {off}")
    return new


def exit_index(synth, ctx, r):
    """The index of the iteration that leaves the loop of Recipe r, as an i64 (ctx: its avail
    names the values, its lines take the code)."""
    init = ctx.avail.get(("p", r.init), r.init)
    n = ctx.avail.get(("p", r.bound), r.bound)
    line = ctx.lines.append
    ty = r.ty
    if r.wide:
        t = synth.tmp("xt")
        line(f"{t} = trunc {r.wide} {init} to {ty}")
        init = t
    hi, lo = (n, init) if r.step > 0 else (init, n)
    if ty == "ptr":                       # a pointer iterator: the step is in bytes
        hi, lo = _address(synth, ctx, hi), _address(synth, ctx, lo)
        ty = "i64"
    d = synth.tmp("xd")
    line(f"{d} = sub {ty} {hi}, {lo}")
    if r.wide:
        return _narrow_count(synth, line, r, ty, d)
    s = abs(r.step)
    if r.pred == "ne":
        c = d
        if s != 1:
            c = synth.tmp("xq")
            line(f"{c} = udiv {ty} {d}, {s}")
    else:                                  # ceil(d / s) when the bound lies ahead, else 0
        c = d
        if s != 1:
            q, m, up, c = (synth.tmp(x) for x in ("xq", "xm", "xu", "xc"))
            line(f"{q} = udiv {ty} {d}, {s}")
            line(f"{m} = urem {ty} {d}, {s}")
            line(f"{up} = icmp ne {ty} {m}, 0")
            line(f"{c} = add {ty} {q}, {_zext_i1(synth, ctx, up, ty)}")
        ahead, c0 = synth.tmp("xa"), synth.tmp("xc")
        line(f"{ahead} = icmp {r.pred[0]}gt {ty} {hi}, {lo}")
        line(f"{c0} = select i1 {ahead}, {ty} {c}, {ty} {1 if r.on_next else 0}")
        c = c0
    if ty != "i64":
        w = synth.tmp("xw")
        line(f"{w} = zext {ty} {c} to i64")
        c = w
    if r.on_next:
        k = synth.tmp("xk")
        line(f"{k} = sub i64 {c}, 1")
        c = k
    return c


def _narrow_count(synth, line, r, ty, d) -> str:
    """The exit index of a wide counter stepping by 1 whose truncation the test compares with
    `!=` (LLVM's exit test of a counter widened from an int): the distance d is exact modulo
    2^bits of ty, where the narrow part first meets the bound (the wide counter cannot wrap
    before it does); on the increment the body ran once more than the distance counts, so
    k = d - 1 there, taken modulo 2^bits too (d = 0: the narrow part comes round once)."""
    if r.on_next:
        d1 = synth.tmp("xd")
        line(f"{d1} = sub {ty} {d}, 1")
        d = d1
    w = synth.tmp("xw")
    line(f"{w} = zext {ty} {d} to i64")
    return w


def _zext_i1(synth, ctx, v, ty):
    w = synth.tmp("xz")
    ctx.lines.append(f"{w} = zext i1 {v} to {ty}")
    return w


def _address(synth, ctx, p):
    v = synth.tmp("xp")
    ctx.lines.append(f"{v} = ptrtoint ptr {p} to i64")
    return v
