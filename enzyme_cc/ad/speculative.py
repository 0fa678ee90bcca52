"""Values computed only to be thrown away by a select: their reverse adds nothing when their
adjoint is zero.

LLVM turns `if (v == 0) r = a; else r = b - u * u / v;` into a select over both arms, so the
division runs (and gives NaN or an infinity) where the program took the other branch. The
reverse of the select sends a zero adjoint into the arm not taken, and the reverse of the
division multiplies that zero by a partial derivative that is not finite there: 0 * inf = NaN,
a NaN gradient (GSL's Steffenson root solver, once converged). A value whose adjoint can only
come through select arms is *speculative*: the contributions its reverse adds are
`select(d == 0, 0, contribution)`, as the branch the program wrote would have added nothing.
Values used elsewhere too keep plain products: there the primal itself used the non-finite
value, and a NaN gradient is the honest answer.
"""
from __future__ import annotations

from enzyme_cc.ir.lexer import is_fp, zero_of

# users through which no adjoint flows back (comparisons, conversions to integers)
_NEUTRAL = ("fcmp", "fptosi", "fptoui")
# instructions whose reverse only moves or signs its adjoint: zero in, zero out (no guard)
_LINEAR = ("fadd", "fsub", "fneg", "select", "fpext", "fptrunc", "freeze", "load",
           "extractelement", "insertelement", "shufflevector", "extractvalue", "insertvalue")


def speculative(synth) -> set[str]:
    """The active floating-point values of synth's function whose every use is an arm of a
    select, a use carrying no adjoint, or another such value, less those whose reverse is
    linear in the adjoint (cached per function)."""
    cache = synth.__dict__.get("_speculative")
    if cache is not None:
        return cache
    fn, act = synth.fn, synth.act
    users: dict[str, list] = {}
    for i in fn.insts():
        for v in set(i.locals_used()):
            users.setdefault(v, []).append(i)
    cand = {i.name for i in fn.insts() if i.name and i.name in act.active and
            is_fp(i.ty.split(" x ")[-1].rstrip(">").strip()) and i.op != "phi"}

    def thrown_away(v, u) -> bool:
        if u.op == "select":
            return u.ops[0].value != v
        return u.op in _NEUTRAL or u.name in spec

    spec = set(cand)
    changed = True
    while changed:          # the greatest such set: drop values with another use until none
        changed = False
        for v in list(spec):
            uses = users.get(v, [])
            if not uses or not all(thrown_away(v, u) for u in uses):
                spec.discard(v)
                changed = True
    linear = {i.name for i in fn.insts() if i.name in spec and i.op in _LINEAR}
    synth._speculative = spec - linear
    return synth._speculative


def guarded(ctx, guard, ty: str, val: str) -> str:
    """val, or zero where the adjoint is zero (the reverse of a speculative value; guard: its
    adjoint and type). Left as it is where the two types do not pair (a vector against one
    lane)."""
    d, dty = guard
    if dty.startswith("<") != ty.startswith("<") or (ty.startswith("<") and ty != dty):
        return val
    zero, dzero = zero_of(ty.strip()), zero_of(dty.strip())
    z, g = ctx.tmp("sz"), ctx.tmp("sg")
    ctx.emit(f"{z} = fcmp oeq {dty} {d}, {dzero}")
    ctx.emit(f"{g} = select {_cond_ty(dty)} {z}, {ty} {zero}, {ty} {val}")
    return g


def _cond_ty(ty: str) -> str:
    if ty.startswith("<"):
        return f"<{ty[1:].split(' x ')[0].strip()} x i1>"
    return "i1"
