"""A two-way phi that its immediate dominator's branch decides, recomputed as a select.

LLVM's runtime unrolling leaves `x.unr = phi [x, %pre], [x.next.prol, %prol]` where a branch
chose whether the prologue iteration ran; such a phi is the value for the unrolled loop's start,
taped once per entry of the loop. When the branch condition and both incoming values can be
recomputed in the reverse sweep (integer arithmetic on induction variables, typically), so can
the phi: `select c, v_true, v_false`.

Exactness: the phi's block P has exactly two predecessors; its immediate dominator B ends in
`br i1 c, T, F`; each predecessor is B itself (the edge B -> P) or lies behind one successor S of
B that is entered only from B (or from blocks S dominates: S may head a loop) and dominates the
predecessor while the other successor does not, so the edge into P tells which way B went; B and
P lie in the same loops (one iteration's c); both values are available at P (defined in blocks
dominating it, or pure arithmetic on such values), and none comes from a loop P is not in, except
an induction variable's exit value computed from inputs available at P (exit_count.py).

The same branch tells the reverse sweep which predecessor P was entered from (its taken-predecessor
index, otherwise a byte on the tape per execution of P): `select c, i_true, i_false`.
"""
from __future__ import annotations

from ..structure import exit_count

# instructions cheaper to recompute in a reverse block than to tape (value_plan.py)
RECOMPUTABLE = {"getelementptr", "bitcast", "addrspacecast", "ptrtoint", "inttoptr", "trunc", "zext",
                "sext", "fptrunc", "fpext", "sitofp", "uitofp", "fptosi", "fptoui", "add", "sub",
                "mul", "shl", "lshr", "ashr", "and", "or", "xor", "icmp", "fcmp", "select", "fadd",
                "fsub", "fmul", "fneg", "extractvalue", "udiv", "sdiv", "urem", "srem", "freeze"}


def branch_select(synth, phi):
    """(c, value if c, value if not c) for `phi`, or None."""
    cache = synth.__dict__.setdefault("_phi_select", {})
    if phi.name not in cache:
        cache[phi.name] = _find(synth, phi)
    return cache[phi.name]


def _idom(synth, label):
    doms = synth.dom[label] - {label}
    return max(doms, key=lambda d: len(synth.dom[d]), default=None)


def exit_values(synth, phi) -> list:
    """The values of branch_select(phi) that come from a loop the phi is not in."""
    p = phi.block.label
    return [x for x in branch_select(synth, phi) or () if x.startswith("%") and
            hasattr(synth.fn.defs[x], "block") and      # (an argument is in no loop)
            not _loops(synth, synth.fn.defs[x].block.label) <= _loops(synth, p)]


def pred_select(synth, label):
    """(c, index of the predecessor taken if c, index if not c) for block `label`'s
    taken-predecessor key, or None."""
    cache = synth.__dict__.setdefault("_pred_select", {})
    if label not in cache:
        blk = synth.fn.block(label)
        found = _sides(synth, label, [q.label for q in blk.preds])
        cache[label] = None
        if found is not None:
            cond, side, (t, f) = found
            order = [q.label for q in blk.preds]
            cache[label] = (cond, order.index(side[t]), order.index(side[f]))
    return cache[label]


def emit_pred(synth, ctx, key):
    """The taken-predecessor index of block key[1], computed in its reverse block."""
    c, if_true, if_false = pred_select(synth, key[1])
    val, ty = synth.tmp("pv"), synth.pred_type(key[1])
    ctx.lines.append(f"{val} = select i1 {ctx.avail.get(('p', c), c)}, {ty} {if_true}, "
                     f"{ty} {if_false}")
    ctx.avail[key] = val


def _sides(synth, p, preds):
    """(c, {successor of B: the predecessor of P behind it}, (T, F)) when P's immediate dominator
    B's branch on c decides which of P's two predecessors was taken; else None."""
    fn = synth.fn
    if len(preds) != 2 or p in synth.loops:
        return None
    b = _idom(synth, p)
    if b is None:
        return None
    term = fn.block(b).term
    if term.op != "br" or len(term.ops) != 1 or len(term.targets) != 2:
        return None
    cond = term.ops[0].value
    t, f = term.targets
    if t == f:
        return None
    if _loops(synth, b) != _loops(synth, p):
        return None
    side = {}
    for pred in preds:
        if pred == b:
            s = t if t == p else f
        else:
            s = None
            for cand, other in ((t, f), (f, t)):
                if cand != p and _entered_from(synth, cand, b) and \
                        cand in synth.dom.get(pred, ()) and other not in synth.dom.get(pred, ()):
                    s = cand
            if s is None:
                return None
        if s in side:
            return None
        side[s] = pred
    if set(side) != {t, f}:
        return None
    return cond, side, (t, f)


def _find(synth, phi):
    fn = synth.fn
    p = phi.block.label
    found = _sides(synth, p, [pred for _, pred in phi.incoming])
    if found is None:
        return None
    cond, side, (t, f) = found
    value = {pred: val for val, pred in phi.incoming}
    side = {s: value[pred] for s, pred in side.items()}
    out = (cond, side[t], side[f])
    for x in out:
        # a value from inside a loop that P is not in (the loop's exit value) is not the value
        # its recomputation in P's loop context would give, unless it is an induction variable
        # whose exit value exit_count.py computes from inputs available at P
        blk = getattr(fn.defs.get(x) if x.startswith("%") else None, "block", None)
        if blk is not None and not _loops(synth, blk.label) <= _loops(synth, p):
            if exit_count.exit_value_form(synth, x) is None or not all(
                    _available(synth, y, p, 0) for y in exit_count.value_inputs(synth, x)):
                return None
        # both values are needed whichever way the branch went: each must be available where P
        # is (defined in a block dominating P, or pure arithmetic on such values, as the
        # prologue's `x.next = x + 1`), or its tape push would sit where it does not dominate
        elif not _available(synth, x, p, 0):
            return None
    return out


def _entered_from(synth, s, b) -> bool:
    """Block s is entered only from b, or from blocks it dominates (s may head a loop, as the
    unrolled loop after `br i1 %skip, %epilogue, %loop`): whoever passed s last came from b."""
    return all(q.label == b or s in synth.dom.get(q.label, ()) for q in synth.fn.block(s).preds) \
        and any(q.label == b for q in synth.fn.block(s).preds)


def _loops(synth, label) -> set:
    """The canonical loops around block `label`, and "cyclic" when it is in any cycle."""
    out = {h for h, lp in synth.loops.items() if label in lp.blocks}
    return out | {"cyclic"} if label in synth.cyclic else out


def _available(synth, v, p, depth) -> bool:
    d = synth.fn.defs.get(v) if v.startswith("%") else None
    blk = getattr(d, "block", None)
    if blk is None or blk.label in synth.dom[p]:
        return True                       # constant, global, parameter, or dominating P
    if depth > 8 or d.op not in RECOMPUTABLE or d.op == "select":
        return False
    return all(_available(synth, o.value, p, depth + 1) for o in d.ops if o.is_local)
