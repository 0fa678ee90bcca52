"""Values the program may compute and then not use: their reverse adds nothing when their
adjoint is zero.

`theta = norm / norm_prev` computed on every Newton iteration but used only from the second
(GSL's modified Newton of its implicit ODE steppers: inf on the first, unused), or LLVM's
select over both arms of `if (v == 0) r = a; else r = b - u * u / v;` (GSL's Steffenson root
solver once converged): the value is not finite where it is not used, its adjoint there is
zero, and the reverse multiplied that zero by the infinite partial derivatives: 0 * inf = NaN,
a NaN gradient with no error. A value is *live* when on every path from its definition to a
return, or to its own block where a loop computes it anew without carrying it in a phi (a
rejected trial step), a use passes its adjoint on (a store other than into a local, a call other than a math
function's, a return, or a live value; not a select arm, whose adjoint is zero where the other
arm is chosen, nor an operand of fmin/fmax and their kin, likewise). The
reverse of a value that is not live adds `select(d == 0, 0, contribution)`: where the program
did not use the value, its branch adds nothing. The guard is always sound (it only turns
0 * inf into 0); liveness only spares it where the program surely used the value, where a NaN
gradient from a non-finite value is the honest answer.
"""
from __future__ import annotations

import os

from enzyme_cc.ir.lexer import compare_type, is_fp, zero_of
from ..structure.type_layout import underlying
from enzyme_cc.rules.registry import call_rule

# users through which no adjoint flows back (comparisons, conversions to integers)
_NEUTRAL = ("fcmp", "fptosi", "fptoui")
_EFFECTS = ("store", "call", "invoke", "ret", "atomicrmw", "cmpxchg")
# rules that pass their adjoint to the operand they choose (libm.toml)
_CHOOSING = {"fmin", "fmax", "fminimum", "fmaximum", "fminimum_num", "fmaximum_num"}


def speculative(synth) -> set[str]:
    """The active floating-point values of synth's function that are not live (see the module
    docstring) and whose reverse is a nonlinear function of their adjoint alone (cached per
    function)."""
    cache = synth.__dict__.get("_speculative")
    if cache is not None:
        return cache
    fn, act = synth.fn, synth.act
    users = fn.users()
    cand = [i for i in fn.insts() if i.name and i.name in act.active and is_fp(i.ty)]
    live = set()
    if not strong_zero():
        live = _live(fn, cand, users, set())
        # a math call passes its operand's adjoint on where its result is live; as a loop's
        # accumulator (s = fma(v, v, s)) is live only through itself, first every call counts
        # as passing it on, then not those whose result is not live even so (pow of a
        # rejected step)
        unused = {i.name for i in cand if i.op == "call" and i.name not in live and _pure(i)}
        if unused:
            live = _live(fn, cand, users, unused)
    synth._speculative = {i.name for i in cand if i.name not in live and _pure(i)}
    return synth._speculative


def _live(fn, cand, users, unused_calls) -> set[str]:
    """The least set of live values: a value is live once live uses cover its paths. Whether
    it is depends on which of its users are live, so a value turning live asks again of its
    operands only. A call among unused_calls passes nothing on."""
    live: set[str] = set()
    by_name = {i.name: i for i in cand}
    todo = list(reversed(cand))
    queued = {i.name for i in todo}
    while todo:
        i = todo.pop()
        queued.discard(i.name)
        if i.name in live or not _covered(fn, i, users.get(i.name, []), live, unused_calls):
            continue
        live.add(i.name)
        for o in i.ops:
            c = by_name.get(o.value)
            if c is not None and o.value not in live and o.value not in queued:
                queued.add(o.value)
                todo.append(c)
    return live


def strong_zero() -> bool:
    """ENZYME_CC_STRONG_ZERO=1 when the derivative is built: every value is guarded, also one
    the program stored and never read back (a trial step a solver computed as NaN and rejected,
    kept in its workspace: GSL's hybrid multiroot solvers after exact convergence). It costs
    a compare and a select per contribution (GMM's gradient: +16 %)."""
    return os.environ.get("ENZYME_CC_STRONG_ZERO", "") not in ("", "0")


def _pure(inst) -> bool:
    """inst's reverse only adds multiples of its own adjoint to its operands' (arithmetic, math
    intrinsics and library functions of values), and not linearly (a guard would change
    nothing there): an atomic update or a call on memory also moves adjoints of memory, which
    no guard on the result's adjoint may drop."""
    if inst.op in ("fmul", "fdiv", "frem"):
        return True
    if inst.op != "call" or any(o.ty == "ptr" for o in inst.ops):
        return False
    callee = inst.callee or ""
    return callee.startswith("@llvm.") or call_rule(callee) is not None


def _covered(fn, inst, uses, live, unused_calls) -> bool:
    """Every path from inst's block to a return passes a use that passes its adjoint on."""
    blocks = set()
    for u in uses:
        if u.op == "select" and u.ops[0].value != inst.name:
            continue                      # an arm: zero adjoint where the other is chosen
        if u.op == "call" and getattr(call_rule(u.callee or ""), "name", None) in _CHOOSING:
            continue                      # the same, inside fmin(x, y)
        if u.op in _NEUTRAL or u.name in unused_calls or not (u.op in _EFFECTS or u.name in live):
            continue
        if u.op == "store" and _local_slot(fn, u.ops[1].value):
            continue                      # read back later, or not (unoptimized code's locals)
        if u.op == "phi":                 # on the edges out of the incoming blocks
            for v, pred in u.incoming:
                if v == inst.name and all(_phi_takes(fn, t, pred, inst.name, live)
                                          for t in fn.block(pred).term.targets):
                    blocks.add(pred)
        else:
            blocks.add(u.block.label)
    return bool(blocks) and _passes_before_redefined(fn, inst, blocks)


def _passes_before_redefined(fn, inst, via: set) -> bool:
    """Every path from inst's block to a return, or back into that block, goes through via.
    Back in its block the value is computed anew: this one is dead there (a loop's rejected
    trial step) unless the path carried it into a phi (a loop's running value)."""
    src = inst.block.label
    if src in via:
        return True
    seen, todo = set(), [(src, False)]
    while todo:
        label, carried = todo.pop()
        b = fn.block(label)
        if b.term.op == "ret":
            return False
        for t in b.term.targets:
            if t in via:
                continue
            c = carried or any((inst.name, label) in p.incoming for p in fn.block(t).phis)
            if t == src:
                if not c:
                    return False
            elif (t, c) not in seen:
                seen.add((t, c))
                todo.append((t, c))
    return True


def _local_slot(fn, ptr: str) -> bool:
    return getattr(fn.defs.get(underlying(fn, ptr)), "op", None) == "alloca"


def _phi_takes(fn, target: str, pred: str, v: str, live) -> bool:
    """The edge pred -> target passes v on: a live phi of target takes v from pred."""
    return any(p.name in live and (v, pred) in p.incoming for p in fn.block(target).phis)


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
    ctx.emit(f"{g} = select {compare_type(dty)} {z}, {ty} {zero}, {ty} {val}")
    return g

