"""Loops marked with __enzyme_set_fixed_point (Enzyme's fixed_point.h): what loop_checkpoint.py's
outliner does differently for them. The marker's options become __enzyme_fixed_point's, its
states must be computed before the loop (unoptimized code decays an array in it: looked
through), and a value carried between iterations in a register goes through a stack slot
(a state when it holds a state's value)."""
from __future__ import annotations

import re

from enzyme_cc.ir.lexer import is_fp
from ..analysis import loop_regions


def options(o):
    """reduction, max_iters, control and the (state, bytes) pairs of the marker; the step
    returns whether to go on, so the loop must test at its end (its latch)."""
    m, p = o.fp, o.p
    if o.X.label != o.L.latch:
        o.fail("a loop marked with __enzyme_set_fixed_point must test at its end, and "
               "LLVM's loop rotation could not move its test there")
    ops = list(m.ops)
    if len(ops) < 5 or len(ops) % 2 == 0 or ops[2].ty != "ptr":
        o.fail("__enzyme_set_fixed_point(reduction, max_iters, control, state, bytes, ...) "
               "needs at least one state and its size")
    for k in range(3, len(ops), 2):       # unoptimized code decays an array in the loop
        ops[k] = type(ops[k])(ops[k].ty, zero_offset_base(o, ops[k].value))
    for x in ops:
        if o.inside(x.value):
            o.fail(f"the argument '{x.value}' of __enzyme_set_fixed_point is computed in "
                   "the loop; compute it before the loop")
    red, mx, ctl = ops[0], ops[1], ops[2]
    o.fp_args = []
    if red.ty != "double":
        o.fail("the reduction of __enzyme_set_fixed_point must be a double")
    try:
        if float(red.value) >= 0:
            o.fp_args += ["ptr @enzyme_fp_reduction", f"double {red.value}"]
    except ValueError:                      # computed: negative means the default
        o.pre += [f"{p}rneg = fcmp olt double {red.value}, 0.0",
                  f"{p}red = select i1 {p}rneg, double 1.0e-12, double {red.value}"]
        o.fp_args += ["ptr @enzyme_fp_reduction", f"double {p}red"]
    n = loop_regions.i64(o, mx)
    if not n.lstrip("-").isdigit():
        o.pre += [f"{p}mneg = icmp slt i64 {n}, 0",
                  f"{p}maxit = select i1 {p}mneg, i64 1000, i64 {n}"]
        o.fp_args += ["ptr @enzyme_fp_max_iters", f"i64 {p}maxit"]
    elif int(n) >= 0:
        o.fp_args += ["ptr @enzyme_fp_max_iters", f"i64 {n}"]
    if ctl.value not in ("null", "zeroinitializer"):
        o.fp_args += ["ptr @enzyme_fp_control", f"ptr {ctl.value}"]
    # a global state (or part of one) the step names itself: fixed_point.lower passes it
    for k in range(3, len(ops), 2):
        z = ops[k].value
        o.states.append((z, loop_regions.i64(o, ops[k + 1])))


def zero_offset_base(o, v: str) -> str:
    """v itself, or the pointer defined before the loop that v (computed in it) equals."""
    d, w = o.fn.defs.get(v), v
    while o.inside(w) and getattr(d, "op", None) in ("getelementptr", "bitcast") and \
            all(x.value == "0" for x in d.ops[1:]):
        w = d.ops[0].value
        d = o.fn.defs.get(w)
    return w if not o.inside(w) else v


def state_phis(o) -> set:
    """The carried values (header phis) that hold a state's value: the latch passes a value
    loaded from a state, or one the loop stores into a state (GVN's load PRE and store
    forwarding carry memory in registers so). Their slots are states of the fixed point."""
    bases = {loop_regions.base_of(o.fn, z) for z, _ in o.states}
    stored = {i.ops[0].value for b in o._blocks() for i in b.insts
              if i.op == "store" and loop_regions.base_of(o.fn, i.ops[1].value) in bases}
    out = set()
    for phi in o.carried:
        v = next(v for v, b in phi.incoming if b == o.L.latch)
        d = o.fn.defs.get(v)
        if v in stored or (getattr(d, "op", None) == "load" and o.inside(v) and
                           loop_regions.base_of(o.fn, d.ops[0].value) in bases):
            out.add(phi.name)
    return out


def check_accumulators(o):
    """A carried float that adds a value of the loop to itself each iteration (acc = acc + x)
    grows with the number of iterations: it has no fixed point, and a fixed point's derivative
    does not see how often the loop ran. It may only decide when to stop; otherwise the loop
    is refused."""
    held = state_phis(o)
    for phi in o.carried:
        if phi.name in held or not is_fp(phi.ty):
            continue
        d = o.fn.defs.get(next(v for v, b in phi.incoming if b == o.L.latch))
        ops = [x.value for x in getattr(d, "ops", [])]
        op = getattr(d, "op", None)
        inc = None
        if op == "fadd" and phi.name in ops[:2]:
            inc = ops[1] if ops[0] == phi.name else ops[0]
        elif op == "fsub" and ops[:1] == [phi.name]:
            inc = ops[1]
        elif op == "call" and re.match(r"@llvm\.(fmuladd|fma)\.", d.callee or "") and \
                ops[2:3] == [phi.name]:
            inc = ops[0] if ops[0].startswith("%") else ops[1]
        if inc and inc.startswith("%") and not control_only(o, phi.name, set()):
            o.fail(f"the loop marked with '__enzyme_set_fixed_point' accumulates "
                   f"'{phi.name}' (adding '{inc}' to it in each iteration) into its results: "
                   "that sum grows with the number of iterations, which a fixed point's "
                   "derivative does not see (a carried value must converge, e.g. "
                   "acc = 0.5 * acc + x)")


def control_only(o, v: str, seen: set) -> bool:
    """v (computed in the loop) only decides when the loop stops: in the loop it reaches
    nothing but comparisons and values of its own kind, and nothing after the loop."""
    if v in seen:
        return True
    if any(x.name == v for x in o.outs):
        return False                        # used after the loop: a result
    seen.add(v)
    for b in o._blocks():
        for inst in b.insts:
            if v not in inst.locals_used() or id(inst) in o.markers:
                continue
            if inst.op in ("icmp", "fcmp"):
                continue
            pure = inst.op == "call" and re.match(r"@llvm\.(?!mem|lifetime|stack|va_)",
                                                  inst.callee or "")
            if inst.op == "br" or not inst.name or (not pure and inst.op in (
                    "store", "call", "invoke", "load", "getelementptr")):
                return False
            if not control_only(o, inst.name, seen):
                return False
    return True
