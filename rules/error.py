"""Error-estimation mode (`__enzyme_error_estimate`): forward mode in which the tangent of a value
is an estimate of its floating-point error, propagated as Enzyme does (after Zou et al.,
"Detecting floating-point errors via atomic conditions", POPL 2020). For an operation
r = f(x_1, ..., x_n) whose active operands carry errors e_i:

    err(r) = max(ulp(r), sum_i |df/dx_i * e_i * x_i / r|)

ulp(r) is the distance from |r| to the next float away from zero. Each term comes from the
operation's own tangent rule run with one operand's tangent set to e_i * x_i / r and every other
operand's to zero, so any operation with a tangent rule (arithmetic, libm/intrinsic call rules)
gets its error formula. Operations that round nothing (loads, stores, phis, selects, casts,
fneg, aggregate moves) carry errors like tangents; calls of differentiated functions run the
callee's error-mode derivative."""
from __future__ import annotations

from enzyme_cc.ir.lexer import is_fp
from .registry import TANGENT
from .calls import _involved, call_kind

ROUNDING_OPS = ("fadd", "fsub", "fmul", "fdiv", "frem")
_INT_OF = {"double": "i64", "float": "i32", "half": "i16", "bfloat": "i16"}
_SUFFIX = {"double": "f64", "float": "f32", "half": "f16", "bfloat": "bf16"}


def rounds(ctx, inst) -> bool:
    """Does inst round its result (and so get the error formula rather than plain propagation)?
    Calls of other kinds than rule calls and differentiated callees are refused."""
    if inst.op in ROUNDING_OPS:
        return True
    if inst.op != "call":
        return False
    kind = call_kind(ctx, inst)
    if kind == "rule":
        return True
    if kind in ("custom", "blas", "fixedpoint", "ckpt_driver", "libm_out") and \
            _involved(ctx, inst):
        what = {"custom": "a call with a registered custom derivative",
                "libm_out": "a math call with two results (modf, sincos)",
                "blas": "a BLAS call",
                "fixedpoint": "a fixed-point loop",
                "ckpt_driver": "a checkpointed loop"}[kind]
        callee = f" (of '{inst.callee[1:]}')" if inst.callee.startswith("@") else ""
        ctx.error(inst, f"{what}{callee} in __enzyme_error_estimate is not supported (its error "
                  "propagation is not defined)",
                  "estimate the error of the code around it, or use __enzyme_fwddiff")
    return False


def _elem(ty: str) -> tuple[str, int]:
    """Element type and lane count of a float or float vector type."""
    if ty.startswith("<"):
        n, _, e = ty[1:-1].partition(" x ")
        return e.strip(), int(n)
    return ty, 0


def _vty(elem: str, n: int) -> str:
    return f"<{n} x {elem}>" if n else elem


def _intrinsic(ctx, name: str, ty: str, nargs: int) -> str:
    elem, n = _elem(ty)
    full = f"llvm.{name}.{'v%d' % n if n else ''}{_SUFFIX[elem]}"
    ctx.gen().declare(full, ty, nargs)
    return "@" + full


def ulp(ctx, ty: str, v: str) -> str:
    """|nextafter(|v|, inf) - |v||: one step of the integer image of |v|."""
    elem, n = _elem(ty)
    ity = _vty(_INT_OF[elem], n)
    a = ctx.tmp("eabs")
    ctx.emit(f"{a} = call {ty} {_intrinsic(ctx, 'fabs', ty, 1)}({ty} {v})")
    bits, nxt, up, d = ctx.tmp("ebits"), ctx.tmp("enext"), ctx.tmp("eup"), ctx.tmp("eulp")
    one = f"splat ({_INT_OF[elem]} 1)" if n else "1"
    ctx.emit(f"{bits} = bitcast {ty} {a} to {ity}")
    ctx.emit(f"{nxt} = add {ity} {bits}, {one}")
    ctx.emit(f"{up} = bitcast {ity} {nxt} to {ty}")
    ctx.emit(f"{d} = fsub {ty} {up}, {a}")
    return d


def error_of(ctx, inst, synth) -> str:
    """The error estimate of inst's result (see the module doc)."""
    ty = inst.ty
    elem, _ = _elem(ty)
    if elem not in _INT_OF:
        ctx.error(inst, f"error estimation of a '{ty}' result is not supported",
                  "compute in double or float")
    rule = TANGENT[inst.op]
    r = ctx.p(inst.name)
    total = None
    seen = []
    for o in inst.ops:
        if not o.is_local or o.value in seen or not ctx.active(o.value) or not is_fp(o.ty) or \
                o.ty != ty:
            if o.is_local and o.value not in seen and ctx.active(o.value) and o.ty != ty and \
                    (is_fp(o.ty) or o.ty.startswith("<")):
                ctx.error(inst, f"error estimation through an operand of type {o.ty} of a {ty} "
                          "operation is not supported", "use one float type in the operation")
            continue
        seen.append(o.value)
        e = ctx.t(o.value, o.ty)
        scaled, rel = ctx.tmp("escale"), ctx.tmp("erel")
        ctx.emit(f"{scaled} = fmul {ty} {e}, {ctx.p(o.value)}")
        ctx.emit(f"{rel} = fdiv {ty} {scaled}, {r}")
        synth.t_only = (o.value, rel)          # ctx.t: rel for this operand, zero for the others
        try:
            term = rule(ctx, inst)
        finally:
            synth.t_only = None
        if term is None:
            continue
        a = ctx.tmp("eterm")
        ctx.emit(f"{a} = call {ty} {_intrinsic(ctx, 'fabs', ty, 1)}({ty} {term})")
        if total is None:
            total = a
        else:
            s = ctx.tmp("esum")
            ctx.emit(f"{s} = fadd {ty} {total}, {a}")
            total = s
    u = ulp(ctx, ty, r)
    if total is None:
        return u
    m = ctx.tmp("err")
    ctx.emit(f"{m} = call {ty} {_intrinsic(ctx, 'maxnum', ty, 2)}({ty} {u}, {ty} {total})")
    return m

