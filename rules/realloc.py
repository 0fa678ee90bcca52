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
        skeep = within_shadow(ctx, keep, ps)
        ctx.emit(f"call void @llvm.memcpy.p0.p0.i64(ptr {sq}, ptr {ps}, i64 {skeep}, i1 false)")
    if p.value != "null" and not (_allocated_here(ctx, p) and p.value in synth.freed):
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
    u, k = ctx.tmp("usable"), ctx.tmp("keep")
    ctx.emit(f"{u} = call i64 @malloc_usable_size(ptr {pv})")
    ctx.emit(f"{k} = call i64 @llvm.umin.i64(i64 {u}, i64 {nv})")
    return k if ps == "null" else within_shadow(ctx, k, ps)


def within_shadow(ctx, keep, ps):
    """`keep` bytes, but no more than the old shadow's usable size: malloc may hand the primal
    a larger chunk than the shadow of the same request (a bin's remainder); the bytes past the
    request hold no data of the program's (random seeds 1348, 1471 corrupted the heap)."""
    u, k = ctx.tmp("usable"), ctx.tmp("keep")
    ctx.emit(f"{u} = call i64 @malloc_usable_size(ptr {ps})")
    ctx.emit(f"{k} = call i64 @llvm.umin.i64(i64 {u}, i64 {keep})")
    return k


def records_moved(synth, inst):
    """The record layout of a realloc'd array of structs: the ranges of the fixed-size copies
    into or out of the old or the new block (`b[i] = s[i]`), all of one layout with float
    data, as RecordRanges with the record's stride (a copy of several records is that many
    records); None when no such copy is seen; when their layouts disagree, the set of kinds
    they hold."""
    from enzyme_cc.ad.copy_types import RecordRanges, copy_ranges
    from enzyme_cc.ad.type_layout import underlying
    fn, types = synth.fn, synth.types
    blocks = {types._find(underlying(fn, v)) for v in (inst.name, inst.ops[0].value)}
    copies = []
    for c in fn.insts():
        if c.op == "call" and (c.callee or "").startswith(("@llvm.memcpy", "@llvm.memmove")) and \
                c.ops[2].value.isdigit() and any(types._find(underlying(fn, o.value)) in blocks
                                                 for o in c.ops[:2]):
            ranges = copy_ranges(synth.module, fn, c, types)
            if not ranges or any(k is None for _, _, k in ranges):
                return None
            copies.append((int(c.ops[2].value), ranges))
    if not copies:
        return None
    # (a copy of records whose tail is overwritten next may have been shortened, by LLVM's
    # dead store elimination: its last record is a part of one)
    stride = min(length for length, _ in copies)
    samples = [_clipped(rs, r, min(stride, length - r)) for length, rs in copies
               for r in range(0, length, stride)]
    layout = _agreed(samples, stride)
    if layout is None:
        return {k for _, rs in copies for _, _, k in rs}
    return RecordRanges(layout, stride) if any(
        k in ("double", "float") for _, _, k in layout) else None


def _clipped(ranges, lo, size):
    """The ranges over [lo, lo + size), from offset 0, and size."""
    out = []
    for off, n, kind in ranges:
        a, b = max(off, lo), min(off + n, lo + size)
        if a < b:
            out.append((a - lo, b - a, kind))
    return out, size


def _agreed(samples, stride):
    """The one layout of a record that several copies draw ((ranges, bytes) of each record a
    copy moves, the last one of a shortened copy a part of one), or None where they disagree.
    Integer ranges and padding carry nothing, and copies draw them differently: a declared
    layout extends a field over the padding after it, `!tbaa.struct` leaves the padding out,
    touching fields of one kind may be one range. So the float and pointer ranges must start
    at the same offsets with the same kinds, no copy may call integer what another calls
    data, and where one range runs longer than another's (over padding), the shorter is
    taken."""
    whole = [_joined([r for r in rs if r[2] != "int"]) for rs, size in samples if size == stride]
    if not whole:
        return None
    starts = [(off, kind) for off, _, kind in whole[0]]
    if any([(off, kind) for off, _, kind in d] != starts for d in whole[1:]):
        return None
    layout = [(off, min(n for d in whole for o, n, _ in d if o == off), kind)
              for off, kind in starts]
    for rs, size in samples:
        if size < stride and [(o, k) for o, _, k in _joined([r for r in rs if r[2] != "int"])] \
                != [(o, k) for o, _, k in layout if o < size]:
            return None                      # a part of a record: the first fields of one
    claimed = [(off, n) for rs, _ in samples for off, n, kind in rs if kind != "int"]
    if any(kind == "int" and o < off + n and off < o + m
           for rs, _ in samples for o, m, kind in rs for off, n in claimed):
        return None
    return layout


def _joined(ranges):
    """Ranges of one kind that touch, as one."""
    out = []
    for off, size, kind in ranges:
        if out and out[-1][2] == kind and out[-1][0] + out[-1][1] == off:
            out[-1] = (out[-1][0], out[-1][1] + size, kind)
        else:
            out.append((off, size, kind))
    return out


def rev_realloc(ctx, inst):
    p, n = inst.ops[0], inst.ops[1]
    synth = ctx.synth
    info = synth.types.pointee_summary(inst.name)
    kinds = set(info.values()) - {"int"}
    if p.value != "null" and p.value in ctx.act.shadowed:
        # an array of structs: field by field, record by record (the records' layout outranks
        # the one kind this function happens to access in the block, as for memcpy)
        records = records_moved(synth, inst)
        held = {k for _, _, k in records} if isinstance(records, list) else records or set()
        if isinstance(records, list) and (len(kinds) != 1 or held - {"int"} - kinds):
            from .copy_adjoint import copy_fields
            keep = copy_len(ctx, ctx.p(p.value), ctx.p(n.value), ctx.s(p.value))
            for off, nb, kind in records:
                if kind in ("double", "float"):
                    copy_fields(ctx.gen(), ctx.emit, ctx.tmp, f"adj_{kind}", ctx.s(inst.name),
                                ctx.s(p.value), off, nb, records, keep)
            kinds = set()
        elif held - {"int"} - kinds or \
                len(kinds) != 1 and not (info and set(info.values()) == {"int"}):
            # (records of other kinds than the one accessed here, whose layouts the copies
            # disagree on: that kind alone would move pointers or floats as doubles)
            ctx.gen().fail(synth, inst, "cannot deduce the type of the data realloc moves",
                           "access the buffer through typed pointers")
        kind = next(iter(kinds), None)
        if kind in ("double", "float"):
            keep = copy_len(ctx, ctx.p(p.value), ctx.p(n.value), ctx.s(p.value))
            fn = ctx.gen().memcpy_adjoint(kind)
            ctx.emit(f"call void @{fn}(ptr {ctx.s(inst.name)}, ptr {ctx.s(p.value)}, i64 {keep})")
    if inst.name in synth.freed:
        ctx.emit(f"call void @free(ptr {ctx.s(inst.name)})")
        ctx.emit(f"call void @free(ptr {ctx.p(inst.name)})")
        ctx.gen().declare_raw("@free", "declare void @free(ptr)")
