"""The adjoint of memcpy/memmove, range by range (float data moves its adjoint from the
destination's shadow to the source's; pointers and integers carry none), and the field-wise
operations on copied records that it and the forward copy of shadows use."""
import re
from enzyme_cc.ad.parallel import openmp, openmp_classes


# an address made from a small constant (Rust's dangling pointer of an empty allocation: its
# alignment), which nothing is ever copied into
_DANGLING = re.compile(r"^inttoptr\s*\(\s*i(?:64|32)\s+[1-9][0-9]{0,3}\s+to\s+ptr\s*\)$")


def rev_memcpy(ctx, inst):
    """Adjoint of a copy, range by range: float data moves its adjoint from the destination's
    shadow to the source's and zeroes it; pointers and integers carry none."""
    dst, src, n = inst.ops[:3]
    if not ctx.shadowed(dst.value):
        if _DANGLING.match(dst.value):
            return     # a zero-size allocation's address (Rust's empty Vec): the copy moves nothing
        if ctx.shadowed(src.value) and not ctx.act.into_inactive_global(dst.value) and any(
                k in ("double", "float", "bytes") for _, _, k in
                ctx.gen().copy_ranges(ctx.synth, inst)):
            ctx.error(inst, "active float data is copied into memory that has no shadow",
                      "make sure the destination is allocated in code compiled with enzyme-cc, "
                      "or pass it as enzyme_dup")
        return
    if not ctx.shadowed(src.value):
        # nothing differentiable came in: the destination's adjoint restarts from zero,
        # whatever the bytes are (e.g. a string's characters copied into a map node)
        ctx.gen().zero_memory(ctx.emit, ctx.s(dst.value), ctx.p(n.value) if n.is_local else
                              n.value, n.ty)
        return
    gen = ctx.gen()
    all_ranges = gen.copy_ranges(ctx.synth, inst)
    if all_ranges[0][2] == "bytes":
        # a block moved and freed (copy_types.moves_freed_block): nothing has added to the
        # source's adjoints yet, so the destination's shadow bytes go back as they are (pointer
        # shadows too, which nothing reads again), and the destination's restart from zero
        total = len64(ctx, n)
        copy_fields(gen, ctx.emit, ctx.tmp, "move", ctx.s(src.value), ctx.s(dst.value), 0,
                    total, all_ranges, total)
        gen.zero_memory(ctx.emit, ctx.s(dst.value), total)
        return
    atomic = "_atomic" if openmp_classes.shared(ctx, src.value) else ""   # other threads add there too
    if atomic and getattr(all_ranges, "stride", None) is not None:
        kind = _one_float_records(all_ranges)
        if kind is None:
            openmp.refuse_shared(ctx, inst, "the adjoint of a copy of records")
        all_ranges = [(0, None, kind)]      # records of one float kind: an array of it
    total = len64(ctx, n)
    ranges = [(off, str(size) if size is not None else total, kind)
              for off, size, kind in all_ranges if kind in ("double", "float")]
    dshadow = ctx.s(dst.value)
    tmp = None
    if (inst.callee or "").startswith(("@llvm.memmove", "@memmove")) and ranges:
        # the ranges may overlap: an adjoint read after another element's adjoint was added
        # into it would be wrong, so take the destination's adjoints out first (into a
        # temporary), zero them, then add them into the source's
        tmp = ctx.tmp("mvadj")
        ctx.emit(f"{tmp} = call ptr @malloc(i64 {total})")
        ctx.emit(f"call void @llvm.memcpy.p0.p0.i64(ptr {tmp}, ptr {dshadow}, i64 {total}, i1 false)")
        gen.declare_raw("@malloc", "declare ptr @malloc(i64)")
        gen.declare_raw("@llvm.memcpy.p0.p0.i64", "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)")
        for off, nb, _ in ranges:
            copy_fields(gen, ctx.emit, ctx.tmp, "zero", dshadow, dshadow, off, nb, all_ranges, total)
        dshadow = tmp
    for off, nb, kind in ranges:
        copy_fields(gen, ctx.emit, ctx.tmp, f"adj_{kind}{atomic}", dshadow, ctx.s(src.value), off, nb,
                        all_ranges, total)
    if tmp is not None:
        ctx.emit(f"call void @free(ptr {tmp})")
        gen.declare_raw("@free", "declare void @free(ptr)")


def _one_float_records(ranges):
    """The float kind of records that hold nothing else, gapless (std::copy of doubles typed as
    records of one double), else None."""
    kinds = {k for _, _, k in ranges}
    if len(kinds) != 1 or not kinds <= {"double", "float"}:
        return None
    end = 0
    for off, size, _ in sorted(ranges):
        if off != end or size is None:
            return None
        end += size
    return kinds.pop() if end == ranges.stride else None


def copy_fields(gen, emit, tmp, op, d, s, off, nbytes, ranges, total):
    """Apply op ('adj_double'/'adj_float': memcpy adjoint, 'zero', 'move') to the range
    [off, off+nbytes) of d (and s): once, or in every record when ranges has a stride."""
    stride = getattr(ranges, "stride", None)
    if stride is None:
        def at(p):
            return _field(emit, tmp, p, off)
        if op.startswith("adj_"):
            emit(f"call void @{gen.memcpy_adjoint(op[4:])}(ptr {at(d)}, ptr {at(s)}, i64 {nbytes})")
        elif op == "zero":
            gen.zero_memory(emit, at(d), nbytes)
        else:
            emit(f"call void @llvm.memmove.p0.p0.i64(ptr {at(d)}, ptr {at(s)}, i64 {nbytes}, i1 false)")
            gen.declare_raw("@llvm.memmove.p0.p0.i64",
                             "declare void @llvm.memmove.p0.p0.i64(ptr, ptr, i64, i1)")
        return
    if op.startswith("adj_"):
        gen.memcpy_adjoint(op[4:])
    gen.helpers.add(("records", op))
    emit(f"call void @__enzyme_cc_records_{op}(ptr {d}, ptr {s}, i64 {total}, i64 {stride}, "
         f"i64 {off}, i64 {nbytes})")


def move_fields_at_once(emit, tmp, d, s, fields):
    """Move the fixed fields [(offset, bytes)] of s to d, reading all of them before writing
    any: a memmove's source and destination may overlap (records shifted by one), so a field
    written first could be the source of another (the records helper orders them instead)."""
    vals = []
    for off, size in fields:
        v = tmp("mv")
        emit(f"{v} = load [{size} x i8], ptr {_field(emit, tmp, s, off)}, align 1")
        vals.append((off, size, v))
    for off, size, v in vals:
        emit(f"store [{size} x i8] {v}, ptr {_field(emit, tmp, d, off)}, align 1")


def _field(emit, tmp, p, off):
    """Pointer p advanced by `off` bytes (p itself at offset 0), emitted."""
    if not off:
        return p
    t = tmp("fld")
    emit(f"{t} = getelementptr i8, ptr {p}, i64 {off}")
    return t


def len64(ctx, n):
    """A copy's byte count as an i64 value."""
    nv = ctx.p(n.value) if n.is_local else n.value
    if n.ty == "i64":
        return nv
    t = ctx.tmp("len")
    ctx.emit(f"{t} = zext {n.ty} {nv} to i64")
    return t
