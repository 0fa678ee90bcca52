"""The forward sweep's shadow rules in reverse mode (rules/instructions.py has the adjoints): each
shadowed pointer gets its shadow beside the primal (GEPs, casts, phis, selects, integer address
arithmetic, loads and stores of pointers), and locals their shadow storage (allocas)."""
from enzyme_cc.ir.lexer import join, mixed_record, type_size, zero_of
from enzyme_cc.ad.synthesis.sweep_ctx import copy_fields
from enzyme_cc.ad.analysis.activity_basics import has_shadow_type, int_pointer_base, int_pointer_chain
from enzyme_cc.ad.structure.type_layout import alloca_align
from .instructions import align_of
from .registry import forward, reverse
from .unshadowed_store import refuse_float_pointer
from enzyme_cc.ad.api.fixed_point import reverse_reads_alloca
from enzyme_cc.ad.api.lane_fusion import lane_room
from .shadow_blocks import defer_free
def _retarget(ctx, inst, subst):
    """The instruction's tokens renamed for the forward sweep, result renamed to its shadow,
    with the operands in `subst` (original value -> replacement) swapped."""
    toks = []
    start = 2 if inst.name else 0
    for k, t in enumerate(inst.toks):
        if k == 0 and inst.name:
            toks.append(ctx.synth.sname(inst.name))
        elif k >= start and t in subst:
            toks.append(subst[t])
        else:
            toks.append(ctx.p(t) if t.startswith("%") else t)
    return join(toks)


@forward("getelementptr", "bitcast", "addrspacecast", "freeze")
def _fwd_gep(ctx, inst, before):
    if not before and inst.op == "freeze" and inst.name in ctx.act.ptrint:
        # an address kept as an integer, frozen: its shadow integer likewise
        ctx.emit(f"{ctx.synth.sname(inst.name)} = freeze {inst.ty} "
                 f"{_int_shadow(ctx, inst.ops[0].value)}")
        return
    if before or inst.name not in ctx.act.shadowed:
        return
    base = inst.ops[0].value
    toks = list(inst.toks)
    # replace only the base operand occurrence (indices may mention the same value)
    out, replaced = [], False
    for k, t in enumerate(toks):
        if k == 0:
            out.append(ctx.synth.sname(inst.name))
        elif not replaced and k >= 2 and t == base:
            out.append(ctx.s(base))
            replaced = True
        else:
            out.append(ctx.p(t) if t.startswith("%") else t)
    ctx.emit(join(out))


@forward("ptrtoint")
def _fwd_ptrtoint(ctx, inst, before):
    """A shadowed pointer kept as an integer (Eigen's expression evaluators store `&A` so): its
    shadow travels as an integer beside it (see the load and store rules)."""
    if before or inst.name not in ctx.act.ptrint:
        return
    ctx.emit(f"{ctx.synth.sname(inst.name)} = ptrtoint ptr {ctx.s(inst.ops[0].value)} to {inst.ty}")


@forward("inttoptr")
def _fwd_inttoptr(ctx, inst, before):
    """inttoptr (ptrtoint P + X): the shadow is the same byte offset from P's shadow; of an
    integer that carries an address (act.ptrint), the same cast of its shadow integer."""
    if before or inst.name not in ctx.act.shadowed:
        return
    s = ctx.synth.sname(inst.name)
    if inst.ops[0].value in ctx.act.ptrint:
        ctx.emit(f"{s} = inttoptr i64 {ctx.synth.sname(inst.ops[0].value)} to ptr")
        return
    found = int_pointer_base(ctx.synth.fn, inst)
    if found is None:                   # a tagged address: its steps on P's shadow
        _replay_tags(ctx, inst, s)
        return
    base, off = found
    if off is None:
        ctx.emit(f"{s} = getelementptr i8, ptr {ctx.s(base)}, i64 0")
    else:
        ov = ctx.p(off) if off.startswith("%") else off
        ctx.emit(f"{s} = getelementptr i8, ptr {ctx.s(base)}, i64 {ov}")


def _replay_tags(ctx, inst, s):
    chain = int_pointer_chain(ctx.synth.fn, inst.ops[0].value)
    if chain is None:
        ctx.gen().fail_where_run(ctx.synth, inst, "a pointer made from integer arithmetic on an "
                                 "address that enzyme-cc cannot follow to its shadow", "keep "
                                 "pointer arithmetic on pointers (no casts through uintptr_t "
                                 "other than offsets and tag bits)", ctx.emit)
        ctx.emit(f"{s} = getelementptr i8, ptr null, i64 0")     # (after the stop)
        return
    base, steps = chain
    cur = ctx.tmp("tag")
    ctx.emit(f"{cur} = ptrtoint ptr {ctx.s(base)} to i64")
    for op, k, other, ty in steps:
        o = ctx.p(other) if other.startswith("%") else other
        nxt = ctx.tmp("tag")
        ctx.emit(f"{nxt} = {op} {ty} {cur if k == 0 else o}, {o if k == 0 else cur}")
        cur = nxt
    ctx.emit(f"{s} = inttoptr i64 {cur} to ptr")


def _int_shadow(ctx, v):
    """The shadow integer of v (act.ptrint), or a constant address itself (never dereferenced
    with a size: Rust's dangling address of an empty Vec)."""
    return ctx.synth.sname(v) if v.startswith("%") else v


@forward("add")
@forward("sub")
@forward("and")
@forward("or")
def _fwd_address_offset(ctx, inst, before):
    """An address kept as an integer, offset or rounded to an alignment: the same on its shadow
    (a block allocated as the primal's, so the rounded shadow address stays inside it)."""
    if before or inst.name not in ctx.act.ptrint:
        return
    a, b = inst.ops
    ctx.emit(f"{ctx.synth.sname(inst.name)} = {inst.op} i64 {_int_shadow(ctx, a.value)}, "
             f"{ctx.p(b.value) if b.value.startswith('%') else b.value}")


@forward("phi")
def _fwd_phi(ctx, inst, before):
    if not before and inst.name in ctx.act.ptrint:
        inc = ", ".join(f"[ {_int_shadow(ctx, v)}, {ctx.p(b)} ]" for v, b in inst.incoming)
        ctx.emit(f"{ctx.synth.sname(inst.name)} = phi i64 {inc}")
        return
    if before or inst.name not in ctx.act.shadowed:
        return
    inc = ", ".join(f"[ {ctx.s(v) if v.startswith('%') else _const_shadow(ctx, v)}, {ctx.p(b)} ]"
                    for v, b in inst.incoming)
    ctx.emit(f"{ctx.synth.sname(inst.name)} = phi {inst.ty} {inc}")


def _const_shadow(ctx, v):
    return ctx.s(v)


@forward("select")
def _fwd_select(ctx, inst, before):
    c, a, b = inst.ops
    if not before and inst.name in ctx.act.ptrint:
        ctx.emit(f"{ctx.synth.sname(inst.name)} = select {c.ty} {ctx.p(c.value)}, i64 "
                 f"{_int_shadow(ctx, a.value)}, i64 {_int_shadow(ctx, b.value)}")
        return
    if before or inst.name not in ctx.act.shadowed:
        return
    ctx.emit(f"{ctx.synth.sname(inst.name)} = select {c.ty} {ctx.p(c.value)}, {inst.ty} "
             f"{ctx.s(a.value)}, {inst.ty} {ctx.s(b.value)}")


@forward("extractvalue")
def _fwd_extractvalue(ctx, inst, before):
    if before or inst.name not in ctx.act.shadowed:
        return
    agg = inst.ops[0]
    idx = ", ".join(map(str, inst.indices))
    ctx.emit(f"{ctx.synth.sname(inst.name)} = extractvalue {agg.ty} {ctx.s(agg.value)}, {idx}")


@forward("insertvalue")
def _fwd_insertvalue(ctx, inst, before):
    """The shadow aggregate holds the shadows of its pointers (null for one without), the primal
    value of its other fields."""
    if before or inst.name not in ctx.act.shadowed:
        return
    agg, elem = inst.ops
    base = ctx.s(agg.value) if agg.value in ctx.act.shadowed or not agg.is_local else \
        "zeroinitializer"
    if not has_shadow_type(elem.ty):
        ev = ctx.p(elem.value) if elem.is_local else elem.value
    elif elem.value in ctx.act.shadowed or not elem.is_local:
        ev = ctx.s(elem.value)
    else:
        ev = zero_of(elem.ty) if elem.ty != "ptr" else "null"
    idx = ", ".join(map(str, inst.indices))
    ctx.emit(f"{ctx.synth.sname(inst.name)} = insertvalue {agg.ty} {base}, {elem.ty} {ev}, {idx}")


@forward("load")
def _fwd_load(ctx, inst, before):
    if before:
        return
    if inst.name in ctx.act.ptrint:           # a pointer copied as an integer: copy its shadow too
        ctx.emit(f"{ctx.synth.sname(inst.name)} = load i64, ptr {ctx.s(inst.ops[0].value)}")
    if inst.name not in ctx.act.shadowed:
        return
    ctx.emit(f"{ctx.synth.sname(inst.name)} = load {inst.ty}, ptr {ctx.s(inst.ops[0].value)}"
             f"{align_of(inst)}")


@forward("store")
def _fwd_store(ctx, inst, before):
    val, ptr = inst.ops
    if before or ptr.value not in ctx.act.shadowed:
        return
    if val.value in ctx.act.ptrint:
        ctx.emit(f"store i64 {ctx.synth.sname(val.value)}, ptr {ctx.s(ptr.value)}")
        return
    if not has_shadow_type(val.ty):
        return
    # A pointer without a shadow stored into shadowed memory gets a null shadow (a vtable's
    # object, a name string, an end pointer: nothing reads a derivative through it). Where the
    # program shows it points to float data, a derivative would be read through null: refused.
    if val.ty == "ptr" and val.value not in ctx.act.shadowed:
        refuse_float_pointer(ctx, inst)
    g = val.value
    sv = ctx.s(g) if g in ctx.act.shadowed else \
        g.startswith("@") and g in ctx.synth.module.globals and ctx.global_shadow(g) or \
        ("null" if val.ty == "ptr" else "zeroinitializer")   # (a constant table: its scratch)
    if mixed_record(val.ty):
        sv = _pointer_fields(ctx, val.ty, sv, ctx.s(ptr.value), align_of(inst))
    ctx.emit(f"store {val.ty} {sv}, ptr {ctx.s(ptr.value)}{align_of(inst)}")


def _pointer_fields(ctx, ty, shadow, sp, al):
    """The record a store of a pointer-and-float record writes into shadow memory: the shadow's
    pointer fields over what the memory holds (its float fields are adjoints, not values)."""
    held = ctx.tmp()
    ctx.emit(f"{held} = load {ty}, ptr {sp}{al}")
    return copy_fields(ctx, ty, held, shadow, lambda t: t == "ptr")


def _alloca_bytes(ctx, inst) -> str:
    size = type_size(inst.src_ty, ctx.synth.module.named_types)
    count = inst.ops[0] if inst.ops else None
    if count is None:
        return str(size)
    n = ctx.tmp()
    cv = ctx.p(count.value) if count.is_local else count.value
    ctx.emit(f"{n} = mul {count.ty} {cv}, {size}")
    if count.ty == "i64":
        return n
    w = ctx.tmp()
    ctx.emit(f"{w} = zext {count.ty} {n} to i64")
    return w


@forward("alloca")
def _fwd_alloca(ctx, inst, before):
    synth = ctx.synth
    if before:
        if synth.mode == "split" and reverse_reads_alloca(synth, inst.name):
            # the reverse sweep runs the fixed point's step on it again, after this frame is
            # gone: the primal lives on the heap until the gradient ends
            synth.gen.declare_raw("@malloc", "declare ptr @malloc(i64)")
            ctx.emit(f"{synth.r(inst.name)} = call ptr @malloc(i64 {_alloca_bytes(ctx, inst)})")
            defer_free(ctx, synth.r(inst.name), "null")
            return False
        return None
    if inst.name not in ctx.act.shadowed:
        return
    count = inst.ops[0] if inst.ops else None
    nbytes = _alloca_bytes(ctx, inst)
    s = synth.sname(inst.name)
    # (the shadow is accessed with the primal's alignment: an AVX local's `align 32` store
    # faults on a block aligned to 16 only)
    align = max(16, alloca_align(inst))
    if synth.mode == "split":
        again = _reversed_again(ctx, inst)
        lanes, stride = lane_room(synth) if again else (1, None)
        if align <= 16:
            ctx.emit(f"{s} = call ptr @calloc(i64 {lanes}, i64 {stride or nbytes})")
            synth.gen.declare_raw("@calloc", "declare noalias ptr @calloc(i64, i64)")
        else:
            total, padded, size = ctx.tmp(), ctx.tmp(), ctx.tmp()
            ctx.emit(f"{total} = mul i64 {lanes}, {stride or nbytes}")
            ctx.emit(f"{padded} = add i64 {total}, {align - 1}")
            ctx.emit(f"{size} = and i64 {padded}, {-align}")       # (a multiple of align)
            ctx.emit(f"{s} = call ptr @aligned_alloc(i64 {align}, i64 {size})")
            synth.gen.declare_raw("@aligned_alloc", "declare noalias ptr @aligned_alloc(i64, i64)")
            synth.gen.zero_memory(ctx.emit, s, size)
        if again:
            defer_free(ctx, "null", s)
    else:
        cnt = f", {count.ty} {ctx.p(count.value) if count.is_local else count.value}" if count else ""
        ctx.emit(f"{s} = alloca {inst.src_ty}{cnt}, align {align}")
        synth.gen.zero_memory(ctx.emit, s, nbytes)


def _reversed_again(ctx, inst) -> bool:
    """A fixed-size local's shadow in a split pair whose reverse runs more than once on one tape
    (reverse vector mode, enzyme_nofree): it lives until the tape is freed, and each reverse
    zeroes it at the end, as the forward sweep made it (reverse_vector.local_shadow)."""
    return ctx.gen().in_multi and not inst.ops


@reverse("alloca")
def _rev_alloca(ctx, inst, d):
    if ctx.synth.mode == "split" and ctx.shadowed(inst.name):
        if _reversed_again(ctx, inst):
            ctx.gen().zero_memory(ctx.emit, ctx.s(inst.name), _alloca_bytes(ctx, inst))
            return
        ctx.emit(f"call void @free(ptr {ctx.s(inst.name)})")
        ctx.gen().declare_raw("@free", "declare void @free(ptr)")
