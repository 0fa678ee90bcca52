"""Natural loops in canonical form (one preheader, one latch, dedicated exits) and their
induction variables. For such loops the synthesis keeps an iteration counter instead of taping
the path: the reverse sweep runs the counter down (Enzyme's canonical induction variable)."""
from __future__ import annotations

from dataclasses import dataclass, field
from enzyme_cc.ir.lexer import type_size


@dataclass
class Loop:
    header: str
    preheader: str
    latch: str
    blocks: set = field(default_factory=set)
    exits: set = field(default_factory=set)


def find_loops(fn, dom) -> dict[str, Loop]:
    """header label -> Loop, for canonical natural loops only."""
    back = {}
    for b in fn.blocks:
        for t in b.term.targets:
            if t in dom.get(b.label, ()):            # edge b -> t with t dominating b
                back.setdefault(t, []).append(b.label)
    loops = {}
    for h, latches in back.items():
        if len(set(latches)) != 1:
            continue
        body, todo = {h}, [latches[0]]
        while todo:
            x = todo.pop()
            if x in body:
                continue
            body.add(x)
            todo.extend(p.label for p in fn.block(x).preds)
        outside = [p.label for p in fn.block(h).preds if p.label not in body]
        if len(outside) != 1 or len(fn.block(h).preds) != 2:
            continue
        exits = {t for x in body for t in fn.block(x).term.targets if t not in body}
        loops[h] = Loop(h, outside[0], latches[0], body, exits)
    # A latch shared by nested loops (its branch goes back to the inner header or on to the
    # outer one, as LLVM leaves a rotated loop nest whose inner exit block was folded away): the
    # outer backedge is also the inner loop's exit, and the reverse sweep, taking it as the
    # outer loop's, would enter the inner loop without its exit count. The inner cycle is left
    # to the general path (its predecessors taped); the outer loop stays canonical.
    for lp in sorted(loops.values(), key=lambda lp: len(lp.blocks)):
        if any(o is not lp and o.latch == lp.latch and len(o.blocks) > len(lp.blocks)
               for o in loops.values()):
            del loops[lp.header]
    return loops


def innermost_loops(loops: dict[str, Loop]) -> dict[str, Loop]:
    """Block label -> the smallest of `loops` that contains it."""
    out = {}
    for lp in sorted(loops.values(), key=lambda lp: -len(lp.blocks)):
        for b in lp.blocks:
            out[b] = lp                       # smaller loops come later and win
    return out


def affine_phi(fn, loop, phi):
    """(init, step) when header phi = init + iv * step (step an integer constant), else None.
    Handles integer adds and pointer GEPs with a constant byte/element offset."""
    if phi.op != "phi" or len(phi.incoming) != 2:
        return None
    init = next((v for v, b in phi.incoming if b == loop.preheader), None)
    nxt = next((v for v, b in phi.incoming if b == loop.latch), None)
    d = fn.defs.get(nxt)
    if init is None or d is None or not hasattr(d, "op"):
        return None
    if phi.ty.startswith("i") and d.op == "add" and len(d.ops) == 2:
        a, b = d.ops
        if a.value == phi.name and _int(b.value) is not None:
            return init, _int(b.value)
        if b.value == phi.name and _int(a.value) is not None:
            return init, _int(a.value)
    if phi.ty == "ptr" and d.op == "getelementptr" and len(d.ops) == 2 and \
            d.ops[0].value == phi.name and _int(d.ops[1].value) is not None:
        try:
            size = type_size(d.src_ty)
        except (ValueError, KeyError):
            return None
        return init, _int(d.ops[1].value) * size
    return None


def _int(v: str):
    try:
        return int(v)
    except ValueError:
        return None
