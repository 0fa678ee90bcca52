"""Calls of the tape helpers in generated code that is itself differentiated (higher order).

The inner derivative's tape holds values its reverse sweep reads back, so they carry derivatives:
the outer derivative keeps a shadow tape (the shadow of the tape header) that takes the same
pushes and pops, so that the shadow of every pushed slot is the matching slot of the shadow tape.
Forward mode uses the shadow immediately: the same helper on the shadow tape. Reverse mode reads
the shadows of the pushes again in its reverse sweep, after later pushes may have grown the
tape: its shadow tape is the stable one (ad/tape/tape.py), freed when the reverse sweep passes the
inner tape's start.
"""
from enzyme_cc.ad.tape.tape import TAPE_OPS

STABLE = {"push": "@__enzyme_cc_stape_push", "spush": "@__enzyme_cc_stape_push",
          "pop": "@__enzyme_cc_stape_pop", "spop": "@__enzyme_cc_stape_pop",
          "start": "@__enzyme_cc_stape_init", "sinit": "@__enzyme_cc_stape_init"}


def is_tape_call(callee: str) -> bool:
    return callee in TAPE_OPS


def forward_sweep(ctx, inst, before):
    """After the primal helper call: the same operation on the shadow tape."""
    t = inst.ops[0].value if inst.ops else None
    if before or t is None or not ctx.shadowed(t) or TAPE_OPS[inst.callee] == "rcheck":
        return                           # (a reservation's end is the primal tape's own)
    synth = ctx.synth
    if synth.mode == "forward":
        callee = inst.callee
    else:
        if TAPE_OPS[inst.callee] == "settop":
            synth.gen.fail(synth, inst, "reverse mode over reverse vector mode (enzyme_width in "
                           "__enzyme_autodiff) is not supported", "differentiate the gradient "
                           "in forward mode, or call __enzyme_autodiff once per seed")
        callee = STABLE.get(TAPE_OPS[inst.callee])
        if callee is None:
            return                       # end/free/top: the reverse sweep still reads the shadow tape
        synth.gen.helpers.add(("stape",))
    args = [f"ptr {ctx.s(t)}"] + [f"{o.ty} {ctx.p(o.value) if o.is_local else o.value}"
                                  for o in inst.ops[1:]]
    call = f"call {inst.ty} {callee}({', '.join(args)})"
    if inst.name and ctx.shadowed(inst.name):
        ctx.emit(f"{synth.sname(inst.name)} = {call}")
    elif inst.name:
        ctx.emit(f"{ctx.tmp()} = {call}")
    else:
        ctx.emit(call)


def reverse_sweep(ctx, inst):
    """The reverse sweep has used the whole shadow tape once it reaches the tape's start."""
    if TAPE_OPS[inst.callee] in ("start", "sinit") and ctx.shadowed(inst.ops[0].value):
        ctx.gen().helpers.add(("stape",))
        ctx.emit(f"call void @__enzyme_cc_stape_free(ptr {ctx.s(inst.ops[0].value)})")


def defer_shadows(ctx, inst):
    """An inner derivative defers freeing a block and its shadow to the end of its tape
    (`__enzyme_cc_defer_free`). The outer derivative's shadows of both go with them (forward mode:
    the primal tape's end) or to the end of the outer's own tape (reverse mode: its reverse
    sweep still uses them)."""
    t, p, s, dealloc = inst.ops[:4]
    shadows = [ctx.s(o.value) if ctx.shadowed(o.value) else "null" for o in (p, s)]
    if shadows == ["null", "null"]:
        return
    tape = ctx.p(t.value) if ctx.synth.mode == "forward" else "%ad.tape"
    ctx.emit(f"call void @__enzyme_cc_defer_free(ptr {tape}, ptr {shadows[0]}, ptr {shadows[1]}, "
             f"ptr {dealloc.value})")
