"""Derivative rules for LLVM instructions (reverse adjoints and forward shadow code).

Each rule is a small function registered for its opcode; the synthesis only looks rules up.
ctx.p(v) primal value, ctx.s(v) shadow pointer, ctx.add(v, ty, x) accumulate an adjoint,
ctx.emit(line), ctx.tmp() fresh name.
"""
from enzyme_cc.ir.lexer import (int_bits, is_fp, join, split_fields, zero_of, carries_float,
                                type_size)
from enzyme_cc.ad.sweep_ctx import adjoint_zero
from enzyme_cc.ad import packed_bits, increments
from enzyme_cc.ad.type_layout import alloca_align, named_align, underlying
from .registry import reverse, forward
from enzyme_cc.ad.activity_basics import has_shadow_type, int_pointer_base, pun_type
from enzyme_cc.ad.debug_types import copied_kind
from enzyme_cc.ad.diagnostics import untyped_copy_hint

NOOP_REVERSE = ("getelementptr", "alloca", "icmp", "fcmp", "bitcast", "addrspacecast", "ptrtoint",
                "inttoptr", "add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "shl", "lshr",
                "ashr", "and", "or", "xor", "trunc", "zext", "sext", "sitofp", "uitofp", "fptosi",
                "fptoui", "freeze", "fence")


@reverse(*NOOP_REVERSE)
def _no_adjoint(ctx, inst, d):
    """Integer, pointer and comparison results carry no derivative; a bitcast or freeze of
    float data passes its adjoint through unchanged."""
    if inst.op in ("bitcast", "freeze") and d is not None:
        ctx.add(inst.ops[0].value, ctx.synth.value_type(inst.ops[0].value), d)
        return
    if inst.name in ctx.act.punned and inst.op in packed_bits.PACKING_OPS:
        if d is not None:                    # floats packed in one register (packed_bits)
            packed_bits.reverse(ctx, inst, d)
        return
    if packed_bits.drops_float(ctx.act, inst):
        return
    if d is not None or any(o.value in ctx.act.punned for o in inst.ops if inst.op not in (
            "icmp", "trunc", "zext", "sext")):
        if d is None and ctx.synth.integer_arm(inst):
            return                           # a tagged union's integer variant (enum_arms)
        ctx.error(inst, "integer arithmetic on data that holds a float (bit manipulation of a "
                  "double)", "compute on the float value instead, or mark the function inactive")


def align_of(inst) -> str:
    """`, align N` of a load/store, for the shadow access that mirrors it (a vector access may be
    less aligned than its type, e.g. Eigen's unaligned packets)."""
    n = named_align(inst)
    return "" if n is None else f", align {n}"


def _bin(ctx, op, ty, a, b, flags=""):
    t = ctx.tmp()
    ctx.emit(f"{t} = {op} {flags}{ty} {a}, {b}")
    return t


@reverse("fadd")
def _fadd(ctx, inst, d):
    a, b = inst.ops
    ctx.add(a.value, inst.ty, d)
    ctx.add(b.value, inst.ty, d)


@reverse("fsub")
def _fsub(ctx, inst, d):
    a, b = inst.ops
    ctx.add(a.value, inst.ty, d)
    if ctx.active(b.value):
        n = ctx.tmp()
        ctx.emit(f"{n} = fneg {inst.ty} {d}")
        ctx.add(b.value, inst.ty, n)


@reverse("fmul")
def _fmul(ctx, inst, d):
    a, b = inst.ops
    if ctx.active(a.value):
        ctx.add(a.value, inst.ty, _bin(ctx, "fmul", inst.ty, d, ctx.p(b.value)))
    if ctx.active(b.value):
        ctx.add(b.value, inst.ty, _bin(ctx, "fmul", inst.ty, d, ctx.p(a.value)))


@reverse("fdiv")
def _fdiv(ctx, inst, d):
    a, b = inst.ops
    if not (ctx.active(a.value) or ctx.active(b.value)):
        return
    q = _bin(ctx, "fdiv", inst.ty, d, ctx.p(b.value))            # d / b
    ctx.add(a.value, inst.ty, q)
    if ctx.active(b.value):
        t = _bin(ctx, "fmul", inst.ty, q, ctx.p(a.value))          # d*a/b
        t = _bin(ctx, "fdiv", inst.ty, t, ctx.p(b.value))          # d*a/b^2
        n = ctx.tmp()
        ctx.emit(f"{n} = fneg {inst.ty} {t}")
        ctx.add(b.value, inst.ty, n)


@reverse("frem")
def _frem(ctx, inst, d):
    # x - trunc(x/y)*y: d/dx = 1, d/dy = -trunc(x/y)
    a, b = inst.ops
    ctx.add(a.value, inst.ty, d)
    if ctx.active(b.value):
        q = _bin(ctx, "fdiv", inst.ty, ctx.p(a.value), ctx.p(b.value), "")
        t = ctx.tmp()
        suffix = {"double": "f64", "float": "f32"}.get(inst.ty, "f64")
        ctx.gen().declare(f"llvm.trunc.{suffix}", inst.ty, 1)
        ctx.emit(f"{t} = call {inst.ty} @llvm.trunc.{suffix}({inst.ty} {q})")
        m = _bin(ctx, "fmul", inst.ty, t, d)
        n = ctx.tmp()
        ctx.emit(f"{n} = fneg {inst.ty} {m}")
        ctx.add(b.value, inst.ty, n)


@reverse("fneg")
def _fneg(ctx, inst, d):
    n = ctx.tmp()
    ctx.emit(f"{n} = fneg {inst.ty} {d}")
    ctx.add(inst.ops[0].value, inst.ty, n)


@reverse("fpext", "fptrunc")
def _fpcast(ctx, inst, d):
    src = inst.ops[0]
    if ctx.active(src.value):
        t = ctx.tmp()
        back = "fptrunc" if inst.op == "fpext" else "fpext"
        ctx.emit(f"{t} = {back} {inst.ty} {d} to {src.ty}")
        ctx.add(src.value, src.ty, t)


def minmax_tie(ctx, inst):
    """For a max or min written as a select (`c = fcmp a, b; select c, a, b`, either order):
    the i1 `a == b`, where the derivative is split evenly between the two, as for fmax/fmin
    (stdlib_rules/libm.toml): a max and a min of the same pair then share it, and a smooth
    function computed through them (LAPACK's dlapy2: max * sqrt(1 + (min/max)^2)) gets its true
    derivative at the tie. None for any other select."""
    c, a, b = inst.ops
    cmp = ctx.synth.fn.defs.get(c.value)
    if c.ty != "i1" or inst.ty not in ("double", "float") or getattr(cmp, "op", None) != "fcmp" \
            or {o.value for o in cmp.ops} != {a.value, b.value} or a.value == b.value:
        return None
    t = ctx.tmp()
    ctx.emit(f"{t} = fcmp oeq {inst.ty} {ctx.p(a.value)}, {ctx.p(b.value)}")
    return t


@reverse("select")
def _select(ctx, inst, d):
    c, a, b = inst.ops
    if d is None:
        return
    ty = ctx.synth.value_type(inst.name)      # an integer select of float bits: as that float
    z = zero_of(ty)
    tie = minmax_tie(ctx, inst) if ctx.active(a.value) and ctx.active(b.value) else None
    half = None
    if tie is not None:
        half = ctx.tmp()
        ctx.emit(f"{half} = fmul {ty} {d}, 0.5")
    for v, on_true in ((a, True), (b, False)):
        if not ctx.active(v.value):
            continue
        t = ctx.tmp()
        pick = f"{ty} {d}, {ty} {z}" if on_true else f"{ty} {z}, {ty} {d}"
        ctx.emit(f"{t} = select {c.ty} {ctx.p(c.value)}, {pick}")
        if tie is not None:
            t2 = ctx.tmp()
            ctx.emit(f"{t2} = select i1 {tie}, {ty} {half}, {ty} {t}")
            t = t2
        ctx.add(v.value, ty, t)


def _adjoint_type(ctx, v):
    """The adjoint type of operand v: a float's for its bits in an integer (or a record of
    integers holding them: packed_bits.record_pun), else its own."""
    return ctx.act.punned.get(v.value, v.ty)


@reverse("extractvalue")
def _extractvalue(ctx, inst, d):
    agg = inst.ops[0]
    if d is None or not ctx.active(agg.value):
        return
    t = ctx.tmp()
    idx = ", ".join(map(str, inst.indices))
    aty = _adjoint_type(ctx, agg)
    ctx.emit(f"{t} = insertvalue {aty} zeroinitializer, {ctx.synth.value_type(inst.name)} {d}, "
             f"{idx}")
    ctx.add(agg.value, aty, t)


@reverse("insertvalue")
def _insertvalue(ctx, inst, d):
    agg, elem = inst.ops
    if d is None:
        return
    idx = ", ".join(map(str, inst.indices))
    dty, ety = ctx.synth.value_type(inst.name), _adjoint_type(ctx, elem)
    if ctx.active(elem.value):
        t = ctx.tmp()
        ctx.emit(f"{t} = extractvalue {dty} {d}, {idx}")
        ctx.add(elem.value, ety, t)
    if ctx.active(agg.value):
        aty = _adjoint_type(ctx, agg)
        if aty == dty:
            t = ctx.tmp()
            ctx.emit(f"{t} = insertvalue {dty} {d}, {ety} {zero_of(ety)}, {idx}")
        else:       # a record of integers whose field k held a float's bits before, not now
            t = "zeroinitializer"
            for k, (a, b) in enumerate(zip(split_fields(aty), split_fields(dty))):
                if a == b and not int_bits(a) and a != "ptr" and k != inst.indices[0]:
                    e, t2 = ctx.tmp(), ctx.tmp()
                    ctx.emit(f"{e} = extractvalue {dty} {d}, {k}")
                    ctx.emit(f"{t2} = insertvalue {aty} {t}, {a} {e}, {k}")
                    t = t2
        ctx.add(agg.value, aty, t)


@reverse("load")
def _load(ctx, inst, d):
    if d is None:
        return
    ty = ctx.synth.value_type(inst.name)      # an integer copy of float data: as that float
    acc = getattr(ctx.synth, "accumulators", {}).get(id(inst))
    if acc is not None:                       # invariant in a loop: a register sum (loop_accum.py)
        old, new = ctx.tmp(), ctx.tmp()
        ctx.emit(f"{old} = load {ty}, ptr {acc[1]}")
        ctx.emit(f"{new} = fadd {ty} {old}, {d}")
        ctx.emit(f"store {ty} {new}, ptr {acc[1]}")
        return
    if increments.of_load(ctx.synth, inst):   # the old value of `p[i] += x` (increments.py)
        return
    sp = ctx.s(inst.ops[0].value)
    old, new = ctx.tmp(), ctx.tmp()
    al = align_of(inst)
    from enzyme_cc.ad import openmp, openmp_classes, openmp_ranges, openmp_version
    if openmp_classes.shared(ctx, inst.ops[0].value):     # other threads add into the same shadow
        cls = openmp_ranges.load_classes(ctx.synth, inst)
        tag = openmp_version.tag(ctx.synth, inst)    # plain in its loop's copy
        if not openmp.atomic_add(ctx, sp, ty, d, al, cls, tag):
            openmp.refuse_shared(ctx, inst, f"an adjoint of type {ty} added")
        return
    ctx.emit(f"{old} = load {ty}, ptr {sp}{al}")
    if is_fp(ty):
        ctx.emit(f"{new} = fadd {ty} {old}, {d}")
    else:
        ctx.gen().need_aggregate_add(ty)
        ctx.emit(f"{new} = call {ty} @{ctx.gen().agg_add_name(ty)}({ty} {old}, {ty} {d})")
    ctx.emit(f"store {ty} {new}, ptr {sp}{al}")


@reverse("extractelement")
def _extractelement(ctx, inst, d):
    vec, idx = inst.ops[0], inst.ops[1]
    if ctx.active(vec.value):
        t = ctx.tmp()
        iv = ctx.p(idx.value) if idx.is_local else idx.value
        ctx.emit(f"{t} = insertelement {vec.ty} zeroinitializer, {inst.ty} {d}, {idx.ty} {iv}")
        ctx.add(vec.value, vec.ty, t)


@reverse("insertelement")
def _insertelement(ctx, inst, d):
    vec, elem, idx = inst.ops
    iv = ctx.p(idx.value) if idx.is_local else idx.value
    if ctx.active(vec.value):
        t = ctx.tmp()
        ctx.emit(f"{t} = insertelement {vec.ty} {d}, {elem.ty} {zero_of(elem.ty)}, {idx.ty} {iv}")
        ctx.add(vec.value, vec.ty, t)
    if ctx.active(elem.value):
        t = ctx.tmp()
        ctx.emit(f"{t} = extractelement {vec.ty} {d}, {idx.ty} {iv}")
        ctx.add(elem.value, elem.ty, t)


@reverse("shufflevector")
def _shufflevector(ctx, inst, d):
    """Each result lane j came from lane mask[j] of a (or of b, past a's width)."""
    a, b = inst.ops[0], inst.ops[1]
    n = int(a.ty.strip()[1:-1].split(" x ", 1)[0])
    elem = inst.ty.strip()[1:-1].split(" x ", 1)[1].strip()
    acc = {}
    for j, m in enumerate(inst.indices):
        src = a if 0 <= m < n else b if m >= n else None
        if src is None or not ctx.active(src.value):
            continue
        lane = m % n
        e, old, new = ctx.tmp(), ctx.tmp(), ctx.tmp()
        ctx.emit(f"{e} = extractelement {inst.ty} {d}, i32 {j}")
        cur = acc.get(src.value, "zeroinitializer")
        ctx.emit(f"{old} = extractelement {a.ty} {cur}, i32 {lane}")
        ctx.emit(f"{new} = fadd {elem} {old}, {e}")
        vec = ctx.tmp()
        ctx.emit(f"{vec} = insertelement {a.ty} {cur}, {elem} {new}, i32 {lane}")
        acc[src.value] = vec
    for v, total in acc.items():
        ctx.add(v, a.ty, total)


@reverse("atomicrmw")
def _atomicrmw(ctx, inst, d):
    """m' = m + v (fadd), m - v (fsub), v (xchg); the result is m. Reverse of serial code: the
    adjoint of m' goes to v, the result's adjoint to m."""
    p, v = inst.ops
    if not ctx.shadowed(p.value):
        return
    if inst.pred not in ("fadd", "fsub", "xchg") or not is_fp(v.ty):
        ctx.error(inst, f"atomic '{inst.pred}' on differentiated memory is not supported",
                  "use a plain update, or fadd/fsub/xchg of a float")
    sp = ctx.s(p.value)
    a = ctx.tmp()
    ctx.emit(f"{a} = load {v.ty}, ptr {sp}{align_of(inst)}")
    if ctx.active(v.value):
        if inst.pred == "fsub":
            n = ctx.tmp()
            ctx.emit(f"{n} = fneg {v.ty} {a}")
            ctx.add(v.value, v.ty, n)
        else:
            ctx.add(v.value, v.ty, a)
    if inst.pred == "xchg":                       # m was overwritten: its adjoint restarts
        ctx.emit(f"store {v.ty} {d if d is not None else zero_of(v.ty)}, ptr {sp}{align_of(inst)}")
    elif d is not None:
        from enzyme_cc.ad import openmp, openmp_classes
        if openmp_classes.shared(ctx, p.value):           # other threads add into the same shadow
            openmp.atomic_add(ctx, sp, v.ty, d, align_of(inst))
            return
        t = ctx.tmp()
        ctx.emit(f"{t} = fadd {v.ty} {a}, {d}")
        ctx.emit(f"store {v.ty} {t}, ptr {sp}{align_of(inst)}")


@reverse("cmpxchg")
def _cmpxchg(ctx, inst, d):
    if ctx.shadowed(inst.ops[0].value):
        ctx.error(inst, "compare-and-swap on differentiated memory (an _Atomic double update?) is "
                  "not supported", "use a plain update, or __atomic_fetch_add on the double")


def unknown_integer_copy(ctx, inst):
    """An integer store into differentiated memory of data whose load could not be typed:
    refused, unless the store's own debug info says it moves integers (a generic function of
    Rust's standard library over an integer type: debug_types.py)."""
    if copied_kind(ctx.synth.module, inst, int_bits(inst.ops[0].ty) // 8) == "int":
        return
    ctx.error(inst, "cannot deduce whether this integer copy between differentiated memory "
              "moves float data", untyped_copy_hint(ctx.synth.fn.name))


def zero_overwritten_floats(ctx, inst):
    """An integer stored over float data (by TBAA): the shadow there restarts from zero."""
    val, ptr = inst.ops
    pun = pun_type(val.ty, ctx.synth.types.content_kind(ptr.value, inst.md.get("!tbaa"),
                                                          int_bits(val.ty) // 8))
    if pun:
        ctx.emit(f"store {pun} {zero_of(pun)}, ptr {ctx.s(ptr.value)}{align_of(inst)}")


@reverse("store")
def _store(ctx, inst, d):
    val, ptr = inst.ops
    if val.value in ctx.act.punned:
        from enzyme_cc.ir.model import Operand
        val = Operand(ctx.act.punned[val.value], val.value)
    elif val.value in ctx.act.unknown_copies and ctx.shadowed(ptr.value):
        unknown_integer_copy(ctx, inst)
    elif not carries_float(val.ty) and int_bits(val.ty) and ctx.shadowed(ptr.value):
        zero_overwritten_floats(ctx, inst)
        return
    if not carries_float(val.ty):
        return
    if not ctx.shadowed(ptr.value):
        if ctx.active(val.value) and not ctx.act.into_inactive_global(ptr.value):
            ctx.error(inst, "an active value is stored to memory that has no shadow (a global, or "
                      "an argument passed as enzyme_const)", "pass that memory as enzyme_dup, or "
                      "give the global a shadow")
        return
    sp = ctx.s(ptr.value)
    if ctx.act.packed.get(inst.ops[0].value) == {32}:
        # a record's float in the high half of the i64 stored (packed_bits)
        sp, t = ctx.tmp(), sp
        ctx.emit(f"{sp} = getelementptr inbounds i8, ptr {t}, i64 4")
    # The store overwrote the location: its adjoint moves to the stored value, and the location's
    # adjoint restarts from zero for whatever was there before. In memory the caller never sees,
    # that zero is -0.0, fadd's identity, so that the reverse of `p[i] += x` (load, add, store)
    # folds back to nothing; a shadow the caller passed keeps clang's +0.0.
    al = align_of(inst)
    zero = adjoint_zero(val.ty) if _private(ctx, ptr.value) else zero_of(val.ty)
    if increments.of_store(ctx.synth, inst) is not None:
        # `p[i] += x`: the location keeps its adjoint, the load's reverse adds none back
        t = ctx.tmp()
        ctx.emit(f"{t} = load {val.ty}, ptr {sp}{al}")
        ctx.add(val.value, val.ty, t)
        return
    if ctx.active(val.value):
        t = ctx.tmp()
        ctx.emit(f"{t} = load {val.ty}, ptr {sp}{al}")
        ctx.emit(f"store {val.ty} {zero}, ptr {sp}{al}")
        ctx.add(val.value, val.ty, t)
    else:
        ctx.emit(f"store {val.ty} {zero}, ptr {sp}{al}")


def _private(ctx, ptr: str) -> bool:
    """ptr points into a local variable or an allocation this function always frees: its shadow
    is the derivative's own."""
    synth = ctx.synth
    base = underlying(synth.fn, ptr)
    d = synth.fn.defs.get(base)
    return getattr(d, "op", None) == "alloca" or base in getattr(synth, "freed", ())


# ---- forward sweep: shadow pointers beside the primal ------------------------------------------

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
    base, off = int_pointer_base(ctx.synth.fn, inst)
    if off is None:
        ctx.emit(f"{s} = getelementptr i8, ptr {ctx.s(base)}, i64 0")
    else:
        ov = ctx.p(off) if off.startswith("%") else off
        ctx.emit(f"{s} = getelementptr i8, ptr {ctx.s(base)}, i64 {ov}")


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
        from .unshadowed_store import refuse_float_pointer
        refuse_float_pointer(ctx, inst)
    g = val.value
    sv = ctx.s(g) if g in ctx.act.shadowed else \
        g.startswith("@") and g in ctx.synth.module.globals and ctx.global_shadow(g) or \
        ("null" if val.ty == "ptr" else "zeroinitializer")   # (a constant table: its scratch)
    ctx.emit(f"store {val.ty} {sv}, ptr {ctx.s(ptr.value)}{align_of(inst)}")


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
        from enzyme_cc.ad.fixed_point import reverse_reads_alloca
        if synth.mode == "split" and reverse_reads_alloca(synth, inst.name):
            # the reverse sweep runs the fixed point's step on it again, after this frame is
            # gone: the primal lives on the heap until the gradient ends
            synth.gen.declare_raw("@malloc", "declare ptr @malloc(i64)")
            ctx.emit(f"{synth.r(inst.name)} = call ptr @malloc(i64 {_alloca_bytes(ctx, inst)})")
            from .shadow_blocks import defer_free
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
        from enzyme_cc.ad.lane_fusion import lane_room
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
            from .shadow_blocks import defer_free
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
