"""Forward-mode (tangent) rules: TANGENT[opcode](ctx, inst) emits the tangent of inst's result and
returns its name (or a constant). ctx.t(v) is the tangent of operand v (zero when inactive),
ctx.p(v) its primal value, ctx.s(v) its shadow pointer."""
import ast

from enzyme_cc.ir.lexer import is_fp, carries_float, int_bits, compare_type, zero_of
from enzyme_cc.ad.structure import packed_bits
from .registry import tangent, call_rule
from .formula import FormulaCompiler
from .instructions import (align_of, integer_counter, minmax_tie, unknown_integer_copy,
                           refuse_cmpxchg,
                           zero_overwritten_floats)
from .calls import (call_kind, check_arity, convert_float, sibling_calls, _involved,
                    refuse_checkpoint_driver, zero_shadow_like)
from enzyme_cc.ad.api.global_shadows_nested import outer_call
from .libm_out import tangent as libm_out_tangent
from .fortran import refuse_associated_pointer
from .blas_tangent import tangent as blas_tangent
from .c_sort import FORWARD_DOES_PRIMAL, sort_lane
from enzyme_cc.ad.api.fixed_point import tangent as fixed_point_tangent


def _piecewise(partial) -> bool:
    """A rule's partial derivative chooses by cases (`where`): fmin, fmax, fabs ..."""
    return any(isinstance(n, ast.Call) and getattr(n.func, "id", None) == "where"
               for n in ast.walk(partial))


def _op(ctx, text):
    t = ctx.tmp("t")
    ctx.emit(f"{t} = {text}")
    return t


# The terms of an inactive operand are left out (as Enzyme does), not emitted as `x * 0.0`:
# LLVM may not fold that (x may be NaN or infinite), and it costs time in every forward loop.

@tangent("fadd", "fsub")
def _t_addsub(ctx, inst):
    a, b = inst.ops
    if not ctx.active(b.value):
        return ctx.t(a.value, a.ty)
    if not ctx.active(a.value):
        tb = ctx.t(b.value, b.ty)
        return tb if inst.op == "fadd" else _op(ctx, f"fneg {inst.ty} {tb}")
    return _op(ctx, f"{inst.op} {inst.ty} {ctx.t(a.value, a.ty)}, {ctx.t(b.value, b.ty)}")


@tangent("fmul")
def _t_mul(ctx, inst):
    a, b = inst.ops
    terms = []
    if ctx.active(a.value) or not ctx.active(b.value):
        terms.append(_op(ctx, f"fmul {inst.ty} {ctx.t(a.value, a.ty)}, {ctx.p(b.value)}"))
    if ctx.active(b.value):
        terms.append(_op(ctx, f"fmul {inst.ty} {ctx.p(a.value)}, {ctx.t(b.value, b.ty)}"))
    return terms[0] if len(terms) == 1 else _op(ctx, f"fadd {inst.ty} {terms[0]}, {terms[1]}")


@tangent("fdiv")
def _t_div(ctx, inst):
    a, b = inst.ops
    q = _op(ctx, f"fdiv {inst.ty} {ctx.t(a.value, a.ty)}, {ctx.p(b.value)}")
    if not ctx.active(b.value):
        return q
    r = _op(ctx, f"fmul {inst.ty} {ctx.p(inst.name)}, {ctx.t(b.value, b.ty)}")
    r = _op(ctx, f"fdiv {inst.ty} {r}, {ctx.p(b.value)}")
    return _op(ctx, f"fsub {inst.ty} {q}, {r}")


@tangent("frem")
def _t_rem(ctx, inst):
    # x - trunc(x/y)*y: tangent tx - trunc(x/y)*ty
    a, b = inst.ops
    ta = ctx.t(a.value, a.ty)
    if not ctx.active(b.value):
        return ta
    q = _op(ctx, f"fdiv {inst.ty} {ctx.p(a.value)}, {ctx.p(b.value)}")
    suffix = {"double": "f64", "float": "f32"}.get(inst.ty, "f64")
    ctx.gen().declare(f"llvm.trunc.{suffix}", inst.ty, 1)
    t = _op(ctx, f"call {inst.ty} @llvm.trunc.{suffix}({inst.ty} {q})")
    m = _op(ctx, f"fmul {inst.ty} {t}, {ctx.t(b.value, b.ty)}")
    return _op(ctx, f"fsub {inst.ty} {ta}, {m}")


@tangent("bitcast")
def _t_bitcast(ctx, inst):
    """A float copied as an integer of the same size (or back): the tangent's bits follow."""
    s = inst.ops[0]
    return _op(ctx, f"bitcast {s.ty} {ctx.t(s.value, s.ty)} to {inst.ty}")


@tangent(*packed_bits.PACKING_OPS)
def _t_packed(ctx, inst):
    """Floats packed in one register (packed_bits): the same packing of their tangents."""
    return packed_bits.tangent(ctx, inst)


@tangent("freeze")
def _t_freeze(ctx, inst):
    return ctx.t(inst.ops[0].value, inst.ty)


@tangent("fneg")
def _t_neg(ctx, inst):
    return _op(ctx, f"fneg {inst.ty} {ctx.t(inst.ops[0].value, inst.ty)}")


@tangent("fpext", "fptrunc")
def _t_cast(ctx, inst):
    s = inst.ops[0]
    return _op(ctx, f"{inst.op} {s.ty} {ctx.t(s.value, s.ty)} to {inst.ty}")


@tangent("select")
def _t_select(ctx, inst):
    c, a, b = inst.ops
    ta, tb = ctx.t(a.value, a.ty), ctx.t(b.value, b.ty)
    t = _op(ctx, f"select {c.ty} {ctx.p(c.value)}, {inst.ty} {ta}, {inst.ty} {tb}")
    tie = minmax_tie(ctx, inst) if ctx.active(a.value) and ctx.active(b.value) else None
    if tie is None:
        return t
    mean = _op(ctx, f"fmul {inst.ty} {_op(ctx, f'fadd {inst.ty} {ta}, {tb}')}, 0.5")
    return _op(ctx, f"select i1 {tie}, {inst.ty} {mean}, {inst.ty} {t}")


@tangent("extractvalue")
def _t_extract(ctx, inst):
    agg = inst.ops[0]
    idx = ", ".join(map(str, inst.indices))
    return _op(ctx, f"extractvalue {agg.ty} {ctx.t(agg.value, agg.ty)}, {idx}")


@tangent("insertvalue")
def _t_insert(ctx, inst):
    agg, e = inst.ops
    idx = ", ".join(map(str, inst.indices))
    return _op(ctx, f"insertvalue {agg.ty} {ctx.t(agg.value, agg.ty)}, {e.ty} "
                    f"{ctx.t(e.value, e.ty)}, {idx}")


@tangent("extractelement")
def _t_extractelement(ctx, inst):
    vec, idx = inst.ops[0], inst.ops[1]
    iv = ctx.p(idx.value) if idx.is_local else idx.value
    return _op(ctx, f"extractelement {vec.ty} {ctx.t(vec.value, vec.ty)}, {idx.ty} {iv}")


@tangent("insertelement")
def _t_insertelement(ctx, inst):
    vec, elem, idx = inst.ops
    iv = ctx.p(idx.value) if idx.is_local else idx.value
    return _op(ctx, f"insertelement {vec.ty} {ctx.t(vec.value, vec.ty)}, {elem.ty} "
                    f"{ctx.t(elem.value, elem.ty)}, {idx.ty} {iv}")


@tangent("shufflevector")
def _t_shufflevector(ctx, inst):
    a, b, mask = inst.ops
    return _op(ctx, f"shufflevector {a.ty} {ctx.t(a.value, a.ty)}, {b.ty} {ctx.t(b.value, b.ty)}, "
                    f"{mask.ty} {mask.value}")


@tangent("atomicrmw")
def _t_atomicrmw(ctx, inst):
    """The same atomic operation on the shadow: it returns the old tangent."""
    p, v = inst.ops
    if not ctx.shadowed(p.value) or integer_counter(inst):
        return None
    if inst.pred not in ("fadd", "fsub", "xchg") or not is_fp(v.ty):
        ctx.error(inst, f"atomic '{inst.pred}' on differentiated memory is not supported",
                  "an atomic add (`#pragma omp atomic` with `+=` or `-=`), a reduction "
                  "clause (`reduction(max:m)`) or `#pragma omp critical` around the update")
    return _op(ctx, f"atomicrmw {inst.pred} ptr {ctx.s(p.value)}, {v.ty} {ctx.t(v.value, v.ty)} "
                    f"monotonic")


@tangent("cmpxchg")
def _t_cmpxchg(ctx, inst):
    refuse_cmpxchg(ctx, inst)
    return None


@tangent("load")
def _t_load(ctx, inst):
    return _op(ctx, f"load {inst.ty}, ptr {ctx.s(inst.ops[0].value)}{align_of(inst)}")


@tangent("store")
def _t_store(ctx, inst):
    val, ptr = inst.ops
    if ctx.shadowed(ptr.value) and not carries_float(val.ty) and int_bits(val.ty):
        if val.value in ctx.act.punned:       # an untyped copy of float data: copy the tangent
            ctx.emit(f"store {val.ty} {ctx.t(val.value, val.ty)}, ptr {ctx.s(ptr.value)}"
                     f"{align_of(inst)}")
        elif val.value in ctx.act.unknown_copies:
            unknown_integer_copy(ctx, inst)
        else:
            zero_overwritten_floats(ctx, inst)
        return None
    if not carries_float(val.ty) or not ctx.shadowed(ptr.value):
        if carries_float(val.ty) and ctx.active(val.value) and \
                not ctx.act.into_inactive_global(ptr.value):
            refuse_associated_pointer(ctx.synth.gen, ctx.synth, inst, ptr.value)
            ctx.error(inst, "an active value is stored to memory that has no shadow",
                      "pass that memory as enzyme_dup")
        return None
    ctx.emit(f"store {val.ty} {ctx.t(val.value, val.ty)}, ptr {ctx.s(ptr.value)}{align_of(inst)}")
    return None


@tangent("call")
def _t_call(ctx, inst):
    kind = call_kind(ctx, inst)
    if (inst.callee or "").startswith("@ad.gs."):
        outer_call(ctx, inst, getattr(ctx.synth, "lane", 0), getattr(ctx.synth, "width", 1))
        return None
    if kind == "rule":
        rule = call_rule(inst.callee)
        check_arity(ctx, inst, rule)
        ty = inst.ty
        env = {n: (ctx.p(o.value), o.ty) for n, o in zip(rule.args, inst.ops)}
        env["r"] = (ctx.p(inst.name), ty) if inst.name else None
        total = None
        live = {k: v for k, v in env.items() if v}
        known = sibling_calls(ctx, inst, rule, [p for n, p, o in zip(
            rule.args, rule.partials, inst.ops) if p is not None and ctx.active(o.value)],
            live, forward=True)
        for name, partial, o in zip(rule.args, rule.partials, inst.ops):
            if partial is None or not ctx.active(o.value):
                continue
            fc = FormulaCompiler(ctx.emit, ctx.tmp, ctx.gen().declare, ty, live,
                                 f"{rule.source}: rule '{rule.name}'", known)
            p = fc.compile(partial)
            term = _op(ctx, f"fmul {ty} {p}, {convert_float(ctx, ctx.t(o.value, o.ty), o.ty, ty)}")
            if _piecewise(partial):       # a branch not taken adds nothing, also a NaN tangent
                zero = zero_of(ty)        # (fmin(x, y) where y is infinite: its tangent NaN)
                z = _op(ctx, f"fcmp oeq {ty} {p}, {zero}")
                term = _op(ctx, f"select {compare_type(ty)} {z}, {ty} {zero}, {ty} {term}")
            total = term if total is None else _op(ctx, f"fadd {ty} {total}, {term}")
        return total
    if kind == "libm_out":
        return libm_out_tangent(ctx, inst)
    if kind == "memcpy":
        dst, src, n = inst.ops[:3]
        if ctx.shadowed(dst.value):
            srcs = ctx.s(src.value) if ctx.shadowed(src.value) else None
            if srcs is None:
                ctx.gen().zero_memory(ctx.emit, ctx.s(dst.value), ctx.p(n.value), n.ty)
            else:
                ctx.emit(f"call void @llvm.memmove.p0.p0.{n.ty}(ptr {ctx.s(dst.value)}, ptr {srcs}, "
                         f"{n.ty} {ctx.p(n.value)}, i1 false)")
                ctx.gen().declare_raw(f"@llvm.memmove.p0.p0.{n.ty}",
                                      f"declare void @llvm.memmove.p0.p0.{n.ty}(ptr, ptr, {n.ty}, i1)")
        return None
    if kind == "memset":
        dst, n = inst.ops[0], inst.ops[2]
        if ctx.shadowed(dst.value):
            zero_shadow_like(ctx, dst, n)
        return None
    if kind == "free":
        if inst.ops and ctx.shadowed(inst.ops[0].value):
            ctx.emit(f"call void {inst.callee}(ptr {ctx.s(inst.ops[0].value)})")
        return None
    if kind == "blas":
        return blas_tangent(ctx, inst) if _involved(ctx, inst) else None
    if kind == "ckpt_driver":
        refuse_checkpoint_driver(ctx.gen(), ctx.synth, inst)
    if kind == "fixedpoint":
        return fixed_point_tangent(ctx, inst) if _involved(ctx, inst) else None
    if kind == "custom":
        if not _involved(ctx, inst):
            return None
        gen = ctx.gen()
        fwd = gen.reg.derivative.get(inst.callee)
        if fwd is None or gen.module.function(fwd) is None:
            ctx.error(inst, f"'{inst.callee[1:]}' has no custom forward derivative with bitcode",
                      f"register one with __enzyme_register_derivative_{inst.callee[1:]}")
        if fwd in FORWARD_DOES_PRIMAL and getattr(ctx.synth, "width", 1) > 1:
            return sort_lane(ctx, inst)
        fn = gen.module.function(fwd)
        args = []
        for o in inst.ops:
            args.append(f"{o.ty} {ctx.p(o.value) if o.is_local else o.value}")
            if o.ty == "ptr":
                args.append(f"ptr {ctx.s(o.value) if ctx.shadowed(o.value) else 'null'}")
            elif is_fp(o.ty):
                args.append(f"{o.ty} {ctx.t(o.value, o.ty)}")
        call = f"call {fn.ret_ty} {fwd}({', '.join(args)})"
        if fn.ret_ty == "void":
            ctx.emit(call)
            return None
        return _op(ctx, call)
    if kind == "diff":
        return ctx.gen().emit_forward_call(ctx, inst) if _involved(ctx, inst) else None
    return None
