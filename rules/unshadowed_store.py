"""A pointer without a shadow stored into memory that has one (rules/shadow_rules.py's store
rule gives it a null shadow): refused where the program shows that it points to float data."""
from __future__ import annotations

from enzyme_cc.ad.analysis.activity_basics import integer_only
from enzyme_cc.ad.structure.type_layout import (FLOATS, decompose, global_named, tbaa_field,
                                                tbaa_pointee, tbaa_reached_floats, underlying)
from enzyme_cc.ad.analysis.typeinfo import reached_slot_kinds
from enzyme_cc.ad.analysis.const_fields import field_load, stored_away
from enzyme_cc.ad.structure.diagnostics import argument_label, demangle_hint
from enzyme_cc.errors import UserError


def _float_pointee(ctx, inst) -> str | None:
    """The kind of float data that the pointer a store writes points to, where the program
    says so: the store's pointer type tag (`double *`), float accesses through the pointer, or a
    pointer read back from the same local memory and accessed as floats."""
    synth, (val, ptr) = ctx.synth, inst.ops
    kind = tbaa_pointee(synth.module, inst.md.get("!tbaa"))
    if kind in FLOATS:
        return kind
    kind = tbaa_reached_floats(synth.module, inst.md.get("!tbaa"))     # (a std::vector's)
    if kind in FLOATS:
        return kind
    fn, types = synth.fn, synth.types
    kinds = set(types.pointee_summary(val.value).values())
    base = underlying(fn, ptr.value)
    field = tbaa_field(synth.module, inst.md.get("!tbaa"))
    if getattr(fn.defs.get(base), "op", None) == "alloca":
        for load in fn.insts():
            if load.op == "load" and load.ty == "ptr" and \
                    underlying(fn, load.ops[0].value) == base and not _other_field(
                        synth.module, fn, field, ptr.value, load):
                kinds |= set(types.pointee_summary(load.name).values())
    return next((k for k in sorted(kinds) if k in FLOATS), None)


def _other_field(module, fn, field, ptr, load) -> bool:
    """The load reads another field of the record than the store at ptr: their offsets in the
    local differ (a std::string's character pointer beside a std::vector<double>'s in one
    record), or their struct-path tags do (a function pointer stored beside a `const double *`
    in an array of records, indexed by a variable)."""
    at, there = decompose(module, fn, ptr)[1], decompose(module, fn, load.ops[0].value)[1]
    if at is not None and there is not None:
        return at != there
    other = tbaa_field(module, load.md.get("!tbaa"))
    return field is not None and other is not None and other != field


def refuse_float_pointer(ctx, inst):
    """Refuse the store `inst` of a pointer without a shadow into shadowed memory where the
    program shows the pointer's target holds floats: the derivative would read or write
    through its null shadow (a fault, or NaN once the optimizer sees the null)."""
    synth, v = ctx.synth, inst.ops[0].value
    if not v.startswith("%") or synth.null_based(v) or \
            integer_only(synth.fn, v, ctx.act.punned):
        return
    if field_load(synth.module, synth.fn, ctx.act.const_fields, inst.ops[1].value):
        return          # its readers know it has no shadow (analysis/const_fields.py)
    kind = _float_pointee(ctx, inst) or _reached_through_record(ctx, inst)
    if kind is None:
        away = _stored_away(ctx, inst)
        if away:
            origin, hint = _origin(synth, v)
            raise UserError(
                f"{synth.where(inst)}: a pointer without a shadow ({origin}) is stored into a "
                f"record that has one, and '{demangle_hint(away)}' keeps the record's address "
                "in memory whose readers cannot be followed; one that loads floats through the "
                f"pointer would reach them through a null shadow; hint: {hint}")
        return
    origin, hint = _origin(synth, v)
    raise UserError(f"{synth.where(inst)}: a pointer to {kind} data without a shadow ({origin}) "
                    "is stored into memory that has one; the derivative would read or write "
                    f"{kind}s through a null shadow; hint: {hint}")


def _stored_away(ctx, inst) -> str | None:
    """The function keeping the address of the local record `inst` stores into where its
    readers are out of sight (const_fields.stored_away)."""
    synth = ctx.synth
    obj = decompose(synth.module, synth.fn, inst.ops[1].value)[0]
    if getattr(synth.fn.defs.get(obj), "op", None) != "alloca":
        return None
    return stored_away(synth.module, synth.fn, obj)


def _reached_through_record(ctx, inst) -> str | None:
    """The kind of float data that code reaches through the pointer stored into a slot of
    local memory: this function or those the record is handed to read the pointer back and
    load floats through it, or through the pointers it leads to (typeinfo.slot_kinds)."""
    synth = ctx.synth
    module, fn = synth.module, synth.fn
    obj, off = decompose(module, fn, inst.ops[1].value)
    if off is None or getattr(fn.defs.get(obj), "op", None) != "alloca":
        return None
    kinds = reached_slot_kinds(module, fn, obj, off)
    return next((k for k in sorted(kinds) if k in FLOATS), None)


def _origin(synth, v) -> tuple[str, str]:
    """Where the pointer without a shadow came from, and what to change there."""
    fn = synth.fn
    name = demangle_hint(fn.name)
    base = underlying(fn, v)
    param = next((i for i, p in enumerate(fn.params) if p.name == base), None)
    top = synth.mode == "combined" or (synth.mode == "forward" and not synth.callee)
    pass_dup = ("pass it enzyme_dup with a shadow (zero-filled where no derivative is wanted)"
                if top else "its callers pass memory without a shadow (enzyme_const): pass "
                "it enzyme_dup with a zero-filled shadow at the marker")
    if param is not None:
        return f"{argument_label(fn, param)} of '{name}'", pass_dup
    d = fn.defs.get(base)
    op = getattr(d, "op", None)
    if op == "load":                  # read from memory that has no shadow here
        src = underlying(fn, d.ops[0].value)
        k = next((i for i, p in enumerate(fn.params) if p.name == src), None)
        g = src if src.startswith("@") else global_named(src)
        if k is not None:
            return (f"'{v}', read from the memory of {argument_label(fn, k)} of '{name}'",
                    f"that argument's memory has no shadow: {pass_dup}")
        if g:
            return (f"'{v}', read from global '{g[1:]}'", "the global has no shadow here: "
                    "give it one (enzyme_shadow), or keep it out of differentiated code")
    if op in ("call", "invoke") and d.callee and not synth.module.defines(d.callee):
        return (f"'{v}', returned by '{d.callee[1:].strip(chr(34))}'",
                "that function has no bitcode and no rule: build it with enzyme-cc, or keep "
                "its result out of differentiated records")
    return (f"'{v}'", "it was made by code whose result has no shadow: keep it out of "
            "differentiated records, or pass the memory it comes from enzyme_dup")
