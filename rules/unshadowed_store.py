"""A pointer without a shadow stored into memory that has one (rules/instructions.py's store
rule gives it a null shadow): refused where the program shows that it points to float data."""
from __future__ import annotations


def _float_pointee(ctx, inst) -> str | None:
    """The kind of float data that the pointer a store writes points to, where the program
    says so: the store's pointer type tag (`double *`), float accesses through the pointer, or a
    pointer read back from the same local memory and accessed as floats."""
    from enzyme_cc.ad.type_layout import FLOATS, tbaa_pointee, underlying
    synth, (val, ptr) = ctx.synth, inst.ops
    kind = tbaa_pointee(synth.module, inst.md.get("!tbaa"))
    if kind in FLOATS:
        return kind
    fn, types = synth.fn, synth.types
    kinds = set(types.pointee_summary(val.value).values())
    base = underlying(fn, ptr.value)
    if getattr(fn.defs.get(base), "op", None) == "alloca":
        for load in fn.insts():
            if load.op == "load" and load.ty == "ptr" and \
                    underlying(fn, load.ops[0].value) == base:
                kinds |= set(types.pointee_summary(load.name).values())
    return next((k for k in sorted(kinds) if k in FLOATS), None)


def refuse_float_pointer(ctx, inst):
    """Refuse the store `inst` of a pointer without a shadow into shadowed memory where the
    program shows the pointer's target holds floats: the derivative would read or write
    through its null shadow (a fault, or NaN once the optimizer sees the null)."""
    from enzyme_cc.errors import UserError
    from enzyme_cc.ad.activity import integer_only
    synth, v = ctx.synth, inst.ops[0].value
    if not v.startswith("%") or synth.null_based(v) or \
            integer_only(synth.fn, v, ctx.act.punned):
        return
    kind = _float_pointee(ctx, inst)
    if kind is None:
        return
    from enzyme_cc.ad.type_layout import underlying
    base = underlying(synth.fn, v)
    param = next((i for i, p in enumerate(synth.fn.params) if p.name == base), None)
    if param is not None:
        origin = f"argument {param + 1} of '{synth.fn.name[1:].strip(chr(34))}'"
        hint = ("pass it enzyme_dup with a shadow (zero-filled where no derivative is "
                "wanted)" if synth.mode == "combined" or
                (synth.mode == "forward" and not synth.callee) else
                "its callers pass memory without a shadow (enzyme_const): pass it enzyme_dup "
                "with a zero-filled shadow at the marker")
    else:
        origin = f"'{v}'"
        hint = ("it was made by code whose result has no shadow (a call without bitcode or "
                "rule): build that code with enzyme-cc, or keep it out of differentiated records")
    raise UserError(f"{synth.where(inst)}: a pointer to {kind} data without a shadow ({origin}) "
                    "is stored into memory that has one; the derivative would read or write "
                    f"{kind}s through a null shadow; hint: {hint}")
