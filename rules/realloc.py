"""realloc in reverse mode: the call runs as malloc + copy (the old block, whose adjoints the
reverse sweep still reads, is freed when the gradient ends), the shadow likewise; the reverse
moves the kept bytes' adjoints back into the old block's shadow."""
from .calls import USABLE_DECL, _allocated_here, defer_free, zero_shadow_block


def realloc_forward(ctx, inst):
    """Reverse mode: realloc(p, n) runs as malloc + copy, the old block's free deferred to the
    reverse sweep (its adjoints are still needed there); the shadow does the same."""
    synth, gen = ctx.synth, ctx.gen()
    p, n = inst.ops[0], inst.ops[1]
    pv = ctx.p(p.value) if p.is_local else p.value
    nv = ctx.p(n.value) if n.is_local else n.value
    ps = ctx.s(p.value) if p.value in ctx.act.shadowed or p.value == "null" else "null"
    keep = copy_len(ctx, pv, nv)
    q, sq = synth.r(inst.name), synth.sname(inst.name)
    ctx.emit(f"{q} = call ptr @malloc(i64 {nv})")
    ctx.emit(f"call void @llvm.memcpy.p0.p0.i64(ptr {q}, ptr {pv}, i64 {keep}, i1 false)")
    ctx.emit(f"{sq} = call ptr @malloc(i64 {nv})")
    zero_shadow_block(ctx, "@realloc", sq, nv)
    if ps != "null":
        ctx.emit(f"call void @llvm.memcpy.p0.p0.i64(ptr {sq}, ptr {ps}, i64 {keep}, i1 false)")
    if p.value != "null" and not (_allocated_here(ctx, p) and p.value in synth.freed):
        # the old blocks' adjoints are read until the reverse sweep ends; an allocation of this
        # function that is freed here is freed by its own reverse instead
        defer_free(ctx, pv, ps)
    for name, line in (("@malloc", "declare ptr @malloc(i64)"),
                       ("@malloc_usable_size", USABLE_DECL),
                       ("@llvm.umin.i64", "declare i64 @llvm.umin.i64(i64, i64)"),
                       ("@llvm.memcpy.p0.p0.i64", "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)")):
        gen.declare_raw(name, line)


def copy_len(ctx, pv, nv):
    """Bytes realloc keeps: min(usable size of the old block, new size) (0 for NULL)."""
    u, k = ctx.tmp("usable"), ctx.tmp("keep")
    ctx.emit(f"{u} = call i64 @malloc_usable_size(ptr {pv})")
    ctx.emit(f"{k} = call i64 @llvm.umin.i64(i64 {u}, i64 {nv})")
    return k


def rev_realloc(ctx, inst):
    p, n = inst.ops[0], inst.ops[1]
    synth = ctx.synth
    info = synth.types.pointee_summary(inst.name)
    kinds = set(info.values()) - {"int"}
    if p.value != "null" and p.value in ctx.act.shadowed:
        if len(kinds) != 1 and not (info and set(info.values()) == {"int"}):
            ctx.gen().fail(synth, inst, "cannot deduce the type of the data realloc moves",
                           "access the buffer through typed pointers")
        kind = next(iter(kinds), None)
        if kind in ("double", "float"):
            keep = copy_len(ctx, ctx.p(p.value), ctx.p(n.value))
            fn = ctx.gen().memcpy_adjoint(kind)
            ctx.emit(f"call void @{fn}(ptr {ctx.s(inst.name)}, ptr {ctx.s(p.value)}, i64 {keep})")
    if inst.name in synth.freed:
        ctx.emit(f"call void @free(ptr {ctx.s(inst.name)})")
        ctx.emit(f"call void @free(ptr {ctx.p(inst.name)})")
        ctx.gen().declare_raw("@free", "declare void @free(ptr)")
