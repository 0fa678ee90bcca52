"""Rules for math library calls with two float results (call kind `libm_out`): `modf(x, &ip)`
returns frac = x - trunc(x) and stores ip = trunc(x); `sincos(x, &s, &c)` (GNU) stores sin x and
cos x; clang turns them into the intrinsics `llvm.modf.*` / `llvm.sincos.*`, which return the
pair as `{ T, T }` (modf at every level, sincos under -fno-math-errno).

A formula rule (libm.toml) has one float result; these have two, one or both written through
pointers. What a pointer result does to its shadow is what a store does: forward mode stores
the tangent there, reverse mode takes (reads and zeroes) the adjoint sitting there, since the
call overwrote that memory. d frac/dx = 1, d ip/dx = 0 (the shadow of *ip gets 0),
d sin/dx = cos x, d cos/dx = -sin x. Integer out-parameters (frexp, remquo, lgamma_r) need none
of this: they are formula rules with an "inactive" pointer argument.
"""
from enzyme_cc.ir.lexer import zero_of
from .formula import FormulaCompiler, parse
from .registry import intrinsic_base

# family -> partial of each result (in result order: the returned value first for modf)
_PARTIALS = {"modf": ("1", None), "sincos": ("cos(x)", "-sin(x)")}
_LIB = {"modf": "modf", "modff": "modf", "sincos": "sincos", "sincosf": "sincos"}
_INTRINSIC = {"llvm.modf": "modf", "llvm.sincos": "sincos"}


def family(callee: str | None) -> str | None:
    """'modf' / 'sincos' for a call of one of these functions or intrinsics, else None."""
    name = (callee or "").lstrip("@").strip('"')
    if name.startswith("llvm."):
        return _INTRINSIC.get(intrinsic_base(name))
    return _LIB.get(name)


def outputs(inst):
    """The pointer operands the call stores its results through, with each one's partial
    (None: a result that carries no derivative, modf's integral part)."""
    fam = family(inst.callee)
    if fam is None or inst.callee.startswith("@llvm."):
        return []
    parts = _PARTIALS[fam][1:] if fam == "modf" else _PARTIALS[fam]
    return list(zip(inst.ops[1:], parts))


def active_outputs(inst) -> list[str]:
    """Pointers through which the call stores data depending on x (activity of memory)."""
    return [o.value for o, p in outputs(inst) if p is not None]


def _type(ctx, inst) -> str:
    ty = inst.ops[0].ty
    if ty not in ("double", "float"):
        ctx.error(inst, f"'{inst.callee.lstrip('@')}' on {ty} values is not supported (its "
                  "derivative is defined for double and float)",
                  "call the scalar double or float function in the differentiated code")
    return ty


def _partial(ctx, inst, expr: str, ty: str) -> str:
    where = f"rule for '{inst.callee.lstrip('@')}'"
    fc = FormulaCompiler(ctx.emit, ctx.tmp, ctx.gen().declare, ty,
                         {"x": (ctx.p(inst.ops[0].value), ty)}, where)
    return fc.compile(parse(expr, where))


def _scaled(ctx, inst, expr, ty, v) -> str:
    if expr == "1":
        return v
    t = ctx.tmp()
    ctx.emit(f"{t} = fmul {ty} {_partial(ctx, inst, expr, ty)}, {v}")
    return t


def _refuse_unshadowed(ctx, inst, ptr):
    ctx.error(inst, f"'{inst.callee.lstrip('@')}' stores a result that depends on an active "
              f"value through '{ptr.value}', which points to memory without a shadow",
              "pass that memory as enzyme_dup (or allocate it in the differentiated code)")


def reverse(ctx, inst, d):
    """dx += sum of partial * adjoint over the results; pointer results take their adjoint from
    the shadow and zero it (the call's store overwrote that memory)."""
    ty = _type(ctx, inst)
    x = inst.ops[0]
    fam = family(inst.callee)
    adjoints = []                      # (partial, adjoint value) of each result
    if inst.callee.startswith("@llvm."):
        if d is not None:
            for k, part in enumerate(_PARTIALS[fam]):
                if part is not None:
                    e = ctx.tmp("d")
                    ctx.emit(f"{e} = extractvalue {inst.ty} {d}, {k}")
                    adjoints.append((part, e))
    else:
        if fam == "modf" and d is not None:
            adjoints.append(("1", d))
        for ptr, part in outputs(inst):
            if not ctx.shadowed(ptr.value):
                if part is not None and ctx.active(x.value) and \
                        not ctx.act.into_inactive_global(ptr.value):
                    _refuse_unshadowed(ctx, inst, ptr)
                continue
            sp = ctx.s(ptr.value)
            if part is not None and ctx.active(x.value):
                v = ctx.tmp("d")
                ctx.emit(f"{v} = load {ty}, ptr {sp}")
                adjoints.append((part, v))
            ctx.emit(f"store {ty} {zero_of(ty)}, ptr {sp}")
    if not ctx.active(x.value):
        return
    for part, v in adjoints:
        ctx.add(x.value, ty, _scaled(ctx, inst, part, ty, v))


def tangent(ctx, inst):
    """Forward mode: the tangent of the returned value (a pair for the intrinsics); pointer
    results store theirs into the shadow (0 for a result without a derivative)."""
    ty = _type(ctx, inst)
    x = inst.ops[0]
    fam = family(inst.callee)
    tx = ctx.t(x.value, ty) if ctx.active(x.value) else None

    def term(part):
        return zero_of(ty) if part is None or tx is None else _scaled(ctx, inst, part, ty, tx)
    if inst.callee.startswith("@llvm."):
        agg = "zeroinitializer"
        for k, part in enumerate(_PARTIALS[fam]):
            if part is not None and tx is not None:
                t = ctx.tmp("t")
                ctx.emit(f"{t} = insertvalue {inst.ty} {agg}, {ty} {term(part)}, {k}")
                agg = t
        return agg
    for ptr, part in outputs(inst):
        if ctx.shadowed(ptr.value):
            ctx.emit(f"store {ty} {term(part)}, ptr {ctx.s(ptr.value)}")
        elif part is not None and tx is not None and not ctx.act.into_inactive_global(ptr.value):
            _refuse_unshadowed(ctx, inst, ptr)
    return term("1") if fam == "modf" else None
