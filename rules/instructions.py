"""Derivative rules for LLVM instructions: the reverse adjoints (the forward sweep's shadow code is
rules/shadow_rules.py).

Each rule is a small function registered for its opcode; the synthesis only looks rules up.
ctx.p(v) primal value, ctx.s(v) shadow pointer, ctx.add(v, ty, x) accumulate an adjoint,
ctx.emit(line), ctx.tmp() fresh name.
"""
from enzyme_cc.ir.lexer import (int_bits, is_fp, same_floats, split_fields, zero_of,
                                 carries_float, mixed_record)
from enzyme_cc.ad.synthesis.sweep_ctx import adjoint_zero, copy_fields
from enzyme_cc.ad.structure import packed_bits
from enzyme_cc.ad.synthesis import increments, openmp_version
from enzyme_cc.ad.parallel import openmp, openmp_classes, openmp_ranges
from enzyme_cc.ad.structure.type_layout import named_align, underlying
from enzyme_cc.ad.structure.diagnostics import from_fortran
from .registry import reverse
from .fortran import refuse_associated_pointer
from enzyme_cc.ad.analysis.activity_basics import pun_type
from enzyme_cc.ad.analysis.debug_types import copied_kind
from enzyme_cc.ad.structure.diagnostics import untyped_copy_hint
from enzyme_cc.ir.model import Operand

NOOP_REVERSE = ("getelementptr", "alloca", "icmp", "fcmp", "bitcast", "addrspacecast", "ptrtoint",
                "inttoptr", "add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "shl", "lshr",
                "ashr", "and", "or", "xor", "trunc", "zext", "sext", "sitofp", "uitofp", "fptosi",
                "fptoui", "freeze", "fence")


@reverse(*NOOP_REVERSE)
def _no_adjoint(ctx, inst, d):
    """Integer, pointer and comparison results carry no derivative; a bitcast or freeze of
    float data passes its adjoint through unchanged."""
    if inst.op in ("bitcast", "freeze") and d is not None:
        src_ty = ctx.synth.value_type(inst.ops[0].value)
        d_ty = ctx.synth.value_type(inst.name) if inst.name in ctx.act.punned else inst.ty
        if inst.op == "bitcast" and (same_floats(d_ty, src_ty) or inst.name in ctx.act.punned
                                     and inst.ops[0].value in ctx.act.punned) and \
                src_ty.replace(" ", "") != d_ty.replace(" ", ""):
            back = ctx.tmp()             # (the same floats in another shape: <1 x double>, or
            #                              float bits regrouped: <8 x float> as <4 x i64>)
            ctx.emit(f"{back} = bitcast {d_ty} {d} to {src_ty}")
            d = back
        ctx.add(inst.ops[0].value, src_ty, d)
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
                  "double)", "give the function doing it a derivative of your own "
                  "(__enzyme_register_gradient), or compute on the float value instead (marking "
                  "it inactive would drop its derivative)")


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


def _refuse_float_piece(ctx, inst, ty):
    # (at the link where every run reaches it; else the reverse sweep stops there if it runs:
    # jl's type-generic gs_scatter has an integer arm that Nekbone runs on integers only)
    ctx.gen().fail_where_run(
        ctx.synth, inst, f"{int_bits(ty) // 8} byte(s) of a float are copied as an integer (a "
        "copy made byte by byte, as a hand-written memcpy loop): the derivative of a float "
        "moved in pieces is not supported",
        "copy whole values (memcpy, or assignments of the floats themselves)", ctx.emit)


@reverse("load")
def _load(ctx, inst, d):
    if d is None:
        return
    ty = ctx.synth.value_type(inst.name)      # an integer copy of float data: as that float
    if inst.name in ctx.act.float_pieces and not is_fp(ty):
        _refuse_float_piece(ctx, inst, ty)    # (its adjoint reached it other than by a store)
        return
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


# integer read-modify-write operations: a reference count or a counter beside float data in
# one block (std::shared_ptr's control block holding its value: make_shared)
_INT_RMW = ("add", "sub", "and", "or", "xor", "nand", "max", "min", "umax", "umin",
            "uinc_wrap", "udec_wrap", "usub_cond", "usub_sat")


def integer_counter(inst) -> bool:
    """An atomic integer arithmetic update: no float's bits (an exchange of an integer could
    move a double's), so no derivative and nothing to do on the shadow."""
    return inst.pred in _INT_RMW and inst.ops[1].ty.startswith("i")


@reverse("atomicrmw")
def _atomicrmw(ctx, inst, d):
    """m' = m + v (fadd), m - v (fsub), v (xchg); the result is m. Reverse of serial code: the
    adjoint of m' goes to v, the result's adjoint to m."""
    p, v = inst.ops
    if not ctx.shadowed(p.value) or integer_counter(inst):
        return
    if inst.pred not in ("fadd", "fsub", "xchg") or not is_fp(v.ty):
        ctx.error(inst, f"atomic '{inst.pred}' on differentiated memory is not supported",
                  "an atomic add (`#pragma omp atomic` with `+=` or `-=`), a reduction "
                  "clause (`reduction(max:m)`) or `#pragma omp critical` around the update")
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
        if openmp_classes.shared(ctx, p.value):           # other threads add into the same shadow
            openmp.atomic_add(ctx, sp, v.ty, d, align_of(inst))
            return
        t = ctx.tmp()
        ctx.emit(f"{t} = fadd {v.ty} {a}, {d}")
        ctx.emit(f"store {v.ty} {t}, ptr {sp}{align_of(inst)}")


@reverse("cmpxchg")
def _cmpxchg(ctx, inst, d):
    refuse_cmpxchg(ctx, inst)


def refuse_cmpxchg(ctx, inst):
    """A compare-and-swap on memory with a shadow: an atomic float update written as a CAS loop
    (C's _Atomic double, flang's `!$omp atomic` on a REAL); atomic adds are differentiated."""
    if ctx.shadowed(inst.ops[0].value):
        fortran = from_fortran(ctx.synth.module, ctx.synth.fn)
        ctx.error(inst, "compare-and-swap on differentiated memory (an atomic update of a float "
                  "done as a compare-and-swap loop: C's _Atomic double, `#pragma omp atomic` "
                  "with `*=`, `/=`, max or min, or `!$omp atomic` on a REAL in flang's code) is "
                  "not supported",
                  "Fortran: a reduction(+:x) clause on the loop, or !$omp critical around the "
                  "update" if fortran else "use a plain update, `#pragma omp atomic` with `+=` "
                  "or `-=` (an atomic add), a reduction clause (`reduction(*:p)`), `#pragma omp "
                  "critical` around the update, or __atomic_fetch_add on the double")


def unknown_integer_copy(ctx, inst):
    """An integer store into differentiated memory of data whose load could not be typed:
    refused, unless the store's own debug info says it moves integers (a generic function of
    Rust's standard library over an integer type: debug_types.py)."""
    if copied_kind(ctx.synth.module, inst, int_bits(inst.ops[0].ty) // 8) == "int":
        return
    ctx.error(inst, "cannot deduce whether this integer copy between differentiated memory "
              "moves float data", untyped_copy_hint(ctx.synth.fn.name, ctx.synth.module))


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
        val = Operand(ctx.act.punned[val.value], val.value)
    elif val.value in ctx.act.unknown_copies and ctx.shadowed(ptr.value):
        unknown_integer_copy(ctx, inst)
    elif val.value in ctx.act.float_pieces and ctx.shadowed(ptr.value):
        _refuse_float_piece(ctx, inst, val.ty)
    elif not carries_float(val.ty) and int_bits(val.ty) and ctx.shadowed(ptr.value):
        zero_overwritten_floats(ctx, inst)
        return
    if not carries_float(val.ty):
        return
    if not ctx.shadowed(ptr.value):
        if ctx.active(val.value) and not ctx.act.into_inactive_global(ptr.value):
            refuse_associated_pointer(ctx.synth.gen, ctx.synth, inst, ptr.value)
            src = ctx.synth.fn.defs.get(underlying(ctx.synth.fn, ptr.value))
            if (getattr(src, "callee", None) or "").startswith(
                    ("@__kmpc_threadprivate_cached", "@llvm.threadlocal.address")):
                ctx.error(inst, "an active value is stored to a thread-local variable (OpenMP "
                          "threadprivate, _Thread_local, thread_local), which is not supported "
                          "(its storage is per thread, without a shadow)",
                          "use a private variable or a reduction clause")
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
    if mixed_record(val.ty):     # the pointer fields' shadows stay: zero the floats alone
        t = ctx.tmp()
        ctx.emit(f"{t} = load {val.ty}, ptr {sp}{al}")
        if ctx.active(val.value):
            ctx.add(val.value, val.ty, t)
        kept = copy_fields(ctx, val.ty, t, "zeroinitializer", carries_float)
        ctx.emit(f"store {val.ty} {kept}, ptr {sp}{al}")
    elif ctx.active(val.value):
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
