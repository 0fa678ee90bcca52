"""realloc in reverse mode: the call runs as malloc + copy (the old block, whose adjoints the
reverse sweep still reads, is freed when the gradient ends), the shadow likewise; the reverse
moves the kept bytes' adjoints back into the old block's shadow."""
from .call_kinds import allocated_here
from .shadow_blocks import USABLE_DECL, defer_free, zero_shadow_block
from enzyme_cc.ad.analysis.copy_types import block_records
from .copy_adjoint import copy_fields


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
        skeep = within_shadow(ctx, keep, ps)
        ctx.emit(f"call void @llvm.memcpy.p0.p0.i64(ptr {sq}, ptr {ps}, i64 {skeep}, i1 false)")
    if p.value != "null" and not (allocated_here(ctx, p) and p.value in synth.freed):
        # the old blocks' adjoints are read until the reverse sweep ends; an allocation of this
        # function that is freed here is freed by its own reverse instead
        defer_free(ctx, pv, ps)
    for name, line in (("@malloc", "declare ptr @malloc(i64)"),
                       ("@malloc_usable_size", USABLE_DECL),
                       ("@llvm.umin.i64", "declare i64 @llvm.umin.i64(i64, i64)"),
                       ("@llvm.memcpy.p0.p0.i64", "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)")):
        gen.declare_raw(name, line)


def copy_len(ctx, pv, nv, ps="null"):
    """Bytes realloc keeps: min(usable size of the old block, new size) (0 for NULL); with the
    old shadow `ps`, the bytes whose adjoints move."""
    k = _within_usable(ctx, pv, nv)
    return k if ps == "null" else within_shadow(ctx, k, ps)


def within_shadow(ctx, keep, ps):
    """`keep` bytes, but no more than the old shadow's usable size: malloc may hand the primal
    a larger chunk than the shadow of the same request (a bin's remainder); the bytes past the
    request hold no data of the program's (random seeds 1348, 1471 corrupted the heap)."""
    return _within_usable(ctx, ps, keep)


def _within_usable(ctx, block, nbytes):
    """min(usable size of heap block `block`, nbytes), emitted."""
    u, k = ctx.tmp("usable"), ctx.tmp("keep")
    ctx.emit(f"{u} = call i64 @malloc_usable_size(ptr {block})")
    ctx.emit(f"{k} = call i64 @llvm.umin.i64(i64 {u}, i64 {nbytes})")
    return k


def rev_realloc(ctx, inst):
    p, n = inst.ops[0], inst.ops[1]
    synth = ctx.synth
    info = synth.types.pointee_summary(inst.name)
    kinds = set(info.values()) - {"int"}
    if p.value != "null" and p.value in ctx.act.shadowed:
        # an array of structs: field by field, record by record (the records' layout outranks
        # the one kind this function happens to access in the block, as for memcpy)
        records = block_records(synth.module, synth.fn, (inst.name, p.value), synth.types)
        held = {k for _, _, k in records} if isinstance(records, list) else records or set()
        if isinstance(records, list) and (len(kinds) != 1 or held - {"int"} - kinds):
            keep = copy_len(ctx, ctx.p(p.value), ctx.p(n.value), ctx.s(p.value))
            for off, nb, kind in records:
                if kind in ("double", "float"):
                    copy_fields(ctx.gen(), ctx.emit, ctx.tmp, f"adj_{kind}", ctx.s(inst.name),
                                ctx.s(p.value), off, nb, records, keep)
            kinds = set()
        elif held - {"int"} - kinds or \
                len(kinds) != 1 and not (info and set(info.values()) == {"int"}):
            # (records of other kinds than the one accessed here, whose layouts the copies
            # disagree on: that kind alone would move pointers or floats as doubles; or no
            # evidence at all, as in a type-erased growth path such as Rust's finish_grow)
            _move_untyped(ctx, synth, inst, p, n)
            kinds = set()
        kind = next(iter(kinds), None)
        if kind in ("double", "float"):
            keep = copy_len(ctx, ctx.p(p.value), ctx.p(n.value), ctx.s(p.value))
            fn = ctx.gen().memcpy_adjoint(kind)
            ctx.emit(f"call void @{fn}(ptr {ctx.s(inst.name)}, ptr {ctx.s(p.value)}, i64 {keep})")
    if inst.name in synth.freed:
        ctx.emit(f"call void @free(ptr {ctx.s(inst.name)})")
        ctx.emit(f"call void @free(ptr {ctx.p(inst.name)})")
        ctx.gen().declare_raw("@free", "declare void @free(ptr)")


def _move_untyped(ctx, synth, inst, p, n):
    """The kept bytes' adjoints moved back whatever their type: the old shadow's bytes become
    the new one's. Exact because nothing has added to the old block's float adjoints when this
    runs: the program cannot touch the old block after realloc, and the reverse of what it did
    before runs later; its pointer and integer shadow bytes go back to what the new block's
    hold, which nothing reads again. A reverse sweep that runs more than once on one forward
    sweep (reverse vector mode) may have left adjoints there: refused."""
    if getattr(ctx.gen(), "in_multi", False):
        ctx.gen().fail(synth, inst, "cannot deduce the type of the data realloc moves (in "
                       "reverse vector mode)", "access the buffer through typed pointers")
    keep = copy_len(ctx, ctx.p(p.value), ctx.p(n.value), ctx.s(p.value))
    keep = within_shadow(ctx, keep, ctx.s(inst.name))
    ctx.emit(f"call void @llvm.memcpy.p0.p0.i64(ptr {ctx.s(p.value)}, ptr {ctx.s(inst.name)}, "
             f"i64 {keep}, i1 false)")
    ctx.gen().declare_raw("@llvm.memcpy.p0.p0.i64",
                          "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)")
