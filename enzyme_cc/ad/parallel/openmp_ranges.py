"""OpenMP reverse mode: plain adjoint adds where no other thread of the team adds.

With 2+ threads an adjoint added into shared memory is atomic (a `lock cmpxchg` loop on x86),
which made the 2-thread gradient of a stencil slower than the 1-thread one. Most of those adds
cannot collide: in a row-parallel loop each thread's adjoints go to its own rows, except next to
another thread's block. So:

- the forward sweep of each thread records, per address class (the underlying object of the
  load, K classes per function), the range [lo, hi) of shadow addresses its loads' adjoints will
  be added into (`track_load`; two locals per class, kept in registers, merged into thread-local
  ranges at the function's returns and into the fork's record by the region's wrapper);
- the reverse wrapper gives each class of the thread the part of its range that no range of
  any other thread touches (each fork's threads ran their forward sweeps to the end before the
  reverse fork);
- an add whose address lies inside the thread's exclusive range of its class is plain
  (`own_range`), any other stays atomic.

This is exact only if every add into shared memory by the region's reverse sweep is a load's
adjoint that its forward sweep tracked: `trackable` accepts a region (with its callees) made of
plain loads and stores, calls of such functions, OpenMP bookkeeping, intrinsics and external
functions without pointer arguments; any other region (atomics, memcpy, library calls on memory,
nested forks, indirect calls) and any region run inside another active team gets empty ranges,
so all its shared adds stay atomic. Over-approximated ranges only keep more adds atomic.
All this is in the team version of a region's derivative only: a thread without a team of
several threads runs the serial version, with plain adds and no tracking (openmp._wrapper).
"""
from enzyme_cc.ir.lexer import type_size
from .openmp_classes import K, load_class
from .openmp_affine import hoisted, iteration_classes, range_check

def track_allocas():
    """Prologue of a team's augmented function: its ranges start empty, in locals (SROA)."""
    out = []
    for k in range(K):
        out += [f"%ad.tlo.{k} = alloca i64", f"%ad.thi.{k} = alloca i64",
                f"store i64 -1, ptr %ad.tlo.{k}", f"store i64 0, ptr %ad.thi.{k}"]
    return out


def load_classes(synth, inst) -> list[int]:
    """The classes whose ranges the forward sweep tracked load inst's shadow addresses in: one,
    or one per iteration of a short loop (openmp_affine.iteration_classes). An add into any
    exclusive range of the thread is safe plain, whichever class it was tracked in."""
    return iteration_classes(synth, inst) or [load_class(synth, inst.ops[0].value)]


def exclusive(synth, k, n) -> tuple[str, str]:
    """(start, width) of the thread's exclusive range of class k for an add of n bytes: an
    address a is inside when a - start < width (unsigned; width 0 for a range shorter than n).
    Read once at the entry of the reverse function (entry_loads): the ranges do not change
    while it runs (a nested region's wrapper puts back what it changed), and read at each add
    they were reloaded after every store of an adjoint, which may alias them for all LLVM knows."""
    used = synth.__dict__.setdefault("_omp_exclusive", {})
    if (k, n) not in used:
        used[(k, n)] = (f"%ad.xl.{k}.{n}", f"%ad.xw.{k}.{n}")
    return used[(k, n)]


def entry_loads(synth) -> list[str]:
    """The reverse function's reads of the exclusive ranges its adds test (exclusive)."""
    out = []
    for (k, n), (lo, w) in sorted(synth.__dict__.get("_omp_exclusive", {}).items()):
        hi, span, fits, room, w1 = (f"%ad.x{t}.{k}.{n}" for t in ("h", "s", "f", "r", "v"))
        out += [f"{lo} = load i64, ptr getelementptr inbounds ([{K} x i64], ptr "
                f"@__enzyme_cc_omp_xlo, i64 0, i64 {k}), align 8",
                f"{hi} = load i64, ptr getelementptr inbounds ([{K} x i64], ptr "
                f"@__enzyme_cc_omp_xhi, i64 0, i64 {k}), align 8",
                f"{span} = sub i64 {hi}, {lo}", f"{fits} = icmp uge i64 {span}, {n}",
                f"{room} = sub i64 {span}, {n}", f"{w1} = add i64 {room}, 1",
                f"{w} = select i1 {fits}, i64 {w1}, i64 0"]
    return out


def track_load(ctx, inst, shared):
    """Forward sweep of a team's derivative: a load whose adjoint goes into shared memory widens
    the thread's range of its class."""
    ptr = inst.ops[0].value
    if inst.name not in ctx.act.active or not shared(ctx, ptr):
        return
    k = load_class(ctx.synth, ptr)
    size = max(type_size(inst.ty, ctx.synth.module.named_types), 1)
    if hoisted(ctx.synth, inst):      # tracked once per loop entry, in the loop's preheader
        if range_check():
            ks = (load_classes(ctx.synth, inst) * 4)[:4]      # in any of them (per iteration)
            pairs = ", ".join(f"ptr %ad.tlo.{c}, ptr %ad.thi.{c}" for c in ks)
            ctx.emit(f"call void @__enzyme_cc_omp_range_assert({pairs}, ptr {ctx.s(ptr)}, "
                     f"i64 {size})")
        return
    ctx.emit(f"call void @__enzyme_cc_omp_track(ptr %ad.tlo.{k}, ptr %ad.thi.{k}, "
             f"ptr {ctx.s(ptr)}, i64 {size})")


def track_merge(ctx):
    """At a return of a team's augmented function: its ranges into the thread's."""
    for k in range(K):
        ctx.emit(f"call void @__enzyme_cc_omp_track_merge(ptr %ad.tlo.{k}, ptr %ad.thi.{k}, i64 {k})")


# intrinsics taking pointers that move no data
_NO_MEMORY = ("@llvm.lifetime.", "@llvm.dbg.", "@llvm.prefetch", "@llvm.invariant.",
              "@llvm.stacksave", "@llvm.stackrestore", "@llvm.experimental.noalias")


def trackable(gen, name, seen, is_openmp, kind, fork) -> bool:
    """Whether the region's code (callees included) adds adjoints into shared memory only as the
    adjoints of plain loads (see the module docstring)."""
    if name in seen:
        return True
    seen.add(name)
    fn = gen.module.function(name)
    if fn is None:
        return False
    for i in fn.insts():
        if i.op in ("load", "store"):
            if {"atomic", "volatile"} & set(i.toks):
                return False
        elif i.op in ("atomicrmw", "cmpxchg", "invoke"):
            return False
        elif i.op == "call":
            c = i.callee or ""
            if not c.startswith("@") or c == fork:
                return False
            if is_openmp(c):
                if kind(c) != "omp":
                    return False
            elif gen.module.defines(c):
                if not trackable(gen, c, seen, is_openmp, kind, fork):
                    return False
            elif any(o.ty == "ptr" for o in i.ops) and not c.startswith(_NO_MEMORY):
                return False            # memcpy, masked loads, library calls on memory, ...
    return True


# Thread-local state: the forward sweep's ranges (per class) and the reverse sweep's exclusive
# ranges (empty outside a reverse wrapper: every shared add atomic). A fork's record keeps each
# thread's ranges after its 24-byte head: K x {lo, hi} per thread (openmp._HELPERS).
IR = f"""
@__enzyme_cc_omp_lo = internal thread_local global [{K} x i64] [{', '.join(['i64 -1'] * K)}], align 8
@__enzyme_cc_omp_hi = internal thread_local global [{K} x i64] zeroinitializer, align 8
@__enzyme_cc_omp_xlo = internal thread_local global [{K} x i64] zeroinitializer, align 8
@__enzyme_cc_omp_xhi = internal thread_local global [{K} x i64] zeroinitializer, align 8

define internal void @__enzyme_cc_omp_track(ptr %tlo, ptr %thi, ptr %p, i64 %n) alwaysinline nounwind {{
entry:
  %a = ptrtoint ptr %p to i64
  %e = add i64 %a, %n
  %lo = load i64, ptr %tlo, align 8
  %hi = load i64, ptr %thi, align 8
  %lo2 = call i64 @llvm.umin.i64(i64 %lo, i64 %a)
  %hi2 = call i64 @llvm.umax.i64(i64 %hi, i64 %e)
  store i64 %lo2, ptr %tlo, align 8
  store i64 %hi2, ptr %thi, align 8
  ret void
}}

define internal void @__enzyme_cc_omp_track_merge(ptr %tlo, ptr %thi, i64 %k) alwaysinline nounwind {{
entry:
  %a = load i64, ptr %tlo, align 8
  %e = load i64, ptr %thi, align 8
  %plo = getelementptr inbounds [{K} x i64], ptr @__enzyme_cc_omp_lo, i64 0, i64 %k
  %phi = getelementptr inbounds [{K} x i64], ptr @__enzyme_cc_omp_hi, i64 0, i64 %k
  %lo = load i64, ptr %plo, align 8
  %hi = load i64, ptr %phi, align 8
  %lo2 = call i64 @llvm.umin.i64(i64 %lo, i64 %a)
  %hi2 = call i64 @llvm.umax.i64(i64 %hi, i64 %e)
  store i64 %lo2, ptr %plo, align 8
  store i64 %hi2, ptr %phi, align 8
  ret void
}}

define internal i1 @__enzyme_cc_omp_own_range(ptr %p, i64 %n, i64 %k) alwaysinline nounwind {{
entry:
  ; xlo <= a && a + n <= xhi as one unsigned compare, a - xlo < w, with w = xhi - xlo - n + 1
  ; (0 when the range holds fewer than n bytes): w is loop-invariant, so a loop of adds pays a
  ; subtraction and a compare per add
  %a = ptrtoint ptr %p to i64
  %plo = getelementptr inbounds [{K} x i64], ptr @__enzyme_cc_omp_xlo, i64 0, i64 %k
  %phi = getelementptr inbounds [{K} x i64], ptr @__enzyme_cc_omp_xhi, i64 0, i64 %k
  %xlo = load i64, ptr %plo, align 8
  %xhi = load i64, ptr %phi, align 8
  %span = sub i64 %xhi, %xlo
  %fits = icmp uge i64 %span, %n
  %room = sub i64 %span, %n
  %w1 = add i64 %room, 1
  %w = select i1 %fits, i64 %w1, i64 0
  %off = sub i64 %a, %xlo
  %in = icmp ult i64 %off, %w
  ret i1 %in
}}

; ENZYME_CC_OMP_RANGE_CHECK: the address of a load tracked in its loop's preheader lies in one of
; the ranges of its classes (several: one per iteration, openmp_affine.iteration_classes)
define internal i1 @__enzyme_cc_omp_in_range(ptr %tlo, ptr %thi, i64 %a, i64 %e) alwaysinline nounwind {{
entry:
  %lo = load i64, ptr %tlo, align 8
  %hi = load i64, ptr %thi, align 8
  %ge = icmp uge i64 %a, %lo
  %le = icmp ule i64 %e, %hi
  %ok = and i1 %ge, %le
  ret i1 %ok
}}

define internal void @__enzyme_cc_omp_range_assert(ptr %l0, ptr %h0, ptr %l1, ptr %h1, ptr %l2, ptr %h2, ptr %l3, ptr %h3, ptr %p, i64 %n) noinline nounwind {{
entry:
  %a = ptrtoint ptr %p to i64
  %e = add i64 %a, %n
  %o0 = call i1 @__enzyme_cc_omp_in_range(ptr %l0, ptr %h0, i64 %a, i64 %e)
  %o1 = call i1 @__enzyme_cc_omp_in_range(ptr %l1, ptr %h1, i64 %a, i64 %e)
  %o2 = call i1 @__enzyme_cc_omp_in_range(ptr %l2, ptr %h2, i64 %a, i64 %e)
  %o3 = call i1 @__enzyme_cc_omp_in_range(ptr %l3, ptr %h3, i64 %a, i64 %e)
  %o01 = or i1 %o0, %o1
  %o23 = or i1 %o2, %o3
  %ok = or i1 %o01, %o23
  br i1 %ok, label %fine, label %fail
fine:
  ret void
fail:
  %m = call i32 @puts(ptr @__enzyme_cc_omp_range_msg)
  call void @abort()
  unreachable
}}
@__enzyme_cc_omp_range_msg = internal constant [50 x i8] c"enzyme-cc: OpenMP range check: load outside range\\00"

; ENZYME_CC_OMP_RANGE_CHECK: an add of a versioned loop's plain copy outside the exclusive range
define internal void @__enzyme_cc_omp_own_fail() noinline nounwind {{
entry:
  %m = call i32 @puts(ptr @__enzyme_cc_omp_own_msg)
  call void @abort()
  unreachable
}}
@__enzyme_cc_omp_own_msg = internal constant [59 x i8] c"enzyme-cc: OpenMP range check: plain add outside own range\\00"

; this thread's slot of the record: K x {{lo, hi}}
define internal ptr @__enzyme_cc_omp_range_slot(ptr %rec, i32 %tid) alwaysinline nounwind {{
entry:
  %t = zext i32 %tid to i64
  %o = mul i64 %t, {16 * K}
  %o2 = add i64 %o, 24
  %s = getelementptr inbounds i8, ptr %rec, i64 %o2
  ret ptr %s
}}

; forward wrapper: save the thread's ranges (an enclosing region's) in %save, start empty ones
define internal void @__enzyme_cc_omp_track_begin(ptr %rec, i1 %track, ptr %save) nounwind {{
entry:
  call void @llvm.memcpy.p0.p0.i64(ptr %save, ptr @__enzyme_cc_omp_lo, i64 {8 * K}, i1 false)
  %sh = getelementptr inbounds i8, ptr %save, i64 {8 * K}
  call void @llvm.memcpy.p0.p0.i64(ptr %sh, ptr @__enzyme_cc_omp_hi, i64 {8 * K}, i1 false)
  call void @llvm.memset.p0.i64(ptr @__enzyme_cc_omp_lo, i8 -1, i64 {8 * K}, i1 false)
  call void @llvm.memset.p0.i64(ptr @__enzyme_cc_omp_hi, i8 0, i64 {8 * K}, i1 false)
  ret void
}}

; ... and keep this fork's ranges in the record, merge them into the saved ones
define internal void @__enzyme_cc_omp_track_end(ptr %rec, ptr %save) nounwind {{
entry:
  %tid = call i32 @omp_get_thread_num()
  %slot = call ptr @__enzyme_cc_omp_range_slot(ptr %rec, i32 %tid)
  br label %head
head:
  %k = phi i64 [ 0, %entry ], [ %k1, %body ]
  %more = icmp ult i64 %k, {K}
  br i1 %more, label %body, label %done
body:
  %plo = getelementptr inbounds [{K} x i64], ptr @__enzyme_cc_omp_lo, i64 0, i64 %k
  %phi = getelementptr inbounds [{K} x i64], ptr @__enzyme_cc_omp_hi, i64 0, i64 %k
  %lo = load i64, ptr %plo, align 8
  %hi = load i64, ptr %phi, align 8
  %k2 = shl i64 %k, 4
  %r = getelementptr inbounds i8, ptr %slot, i64 %k2
  store i64 %lo, ptr %r, align 8
  %rh = getelementptr inbounds i8, ptr %r, i64 8
  store i64 %hi, ptr %rh, align 8
  %k8 = shl i64 %k, 3
  %so = getelementptr inbounds i8, ptr %save, i64 %k8
  %olo = load i64, ptr %so, align 8
  %k8h = add i64 %k8, {8 * K}
  %soh = getelementptr inbounds i8, ptr %save, i64 %k8h
  %ohi = load i64, ptr %soh, align 8
  %mlo = call i64 @llvm.umin.i64(i64 %olo, i64 %lo)
  %mhi = call i64 @llvm.umax.i64(i64 %ohi, i64 %hi)
  store i64 %mlo, ptr %plo, align 8
  store i64 %mhi, ptr %phi, align 8
  %k1 = add i64 %k, 1
  br label %head
done:
  ret void
}}

; reverse wrapper: save the exclusive ranges in %save; each class of this thread gets its range
; less every range of every other thread (empty when the region is not trackable or runs inside
; another team, whose other threads may add there too: also a team of one nested in an active
; team, where omp_get_active_level is 1 but the active team is the enclosing one)
define internal void @__enzyme_cc_omp_excl_begin(ptr %rec, i1 %track, ptr %save) nounwind {{
entry:
  call void @llvm.memcpy.p0.p0.i64(ptr %save, ptr @__enzyme_cc_omp_xlo, i64 {8 * K}, i1 false)
  %sh = getelementptr inbounds i8, ptr %save, i64 {8 * K}
  call void @llvm.memcpy.p0.p0.i64(ptr %sh, ptr @__enzyme_cc_omp_xhi, i64 {8 * K}, i1 false)
  call void @llvm.memset.p0.i64(ptr @__enzyme_cc_omp_xlo, i8 0, i64 {8 * K}, i1 false)
  call void @llvm.memset.p0.i64(ptr @__enzyme_cc_omp_xhi, i8 0, i64 {8 * K}, i1 false)
  %lvl = call i32 @omp_get_active_level()
  %all = call i32 @omp_get_level()
  %one = icmp sle i32 %lvl, 1
  %top = icmp eq i32 %all, %lvl
  %flat = and i1 %one, %top
  %go = and i1 %track, %flat
  br i1 %go, label %mine, label %done
mine:
  %tid = call i32 @omp_get_thread_num()
  %nt = load i32, ptr %rec, align 4
  %own = call ptr @__enzyme_cc_omp_range_slot(ptr %rec, i32 %tid)
  %n = zext i32 %nt to i64
  %nc = mul i64 %n, {K}
  br label %cls
cls:
  %c = phi i64 [ 0, %mine ], [ %c1, %set ]
  %morec = icmp ult i64 %c, {K}
  br i1 %morec, label %start, label %done
start:
  %c2 = shl i64 %c, 4
  %r = getelementptr inbounds i8, ptr %own, i64 %c2
  %L0 = load i64, ptr %r, align 8
  %rh = getelementptr inbounds i8, ptr %r, i64 8
  %H0 = load i64, ptr %rh, align 8
  %none = icmp uge i64 %L0, %H0                   ; a class this thread never loaded through
  br i1 %none, label %set, label %head
head:
  %j = phi i64 [ 0, %start ], [ %j1, %body ]
  %L = phi i64 [ %L0, %start ], [ %L2, %body ]
  %H = phi i64 [ %H0, %start ], [ %H2, %body ]
  %more = icmp ult i64 %j, %nc
  br i1 %more, label %body, label %set
body:
  %s = udiv i64 %j, {K}
  %s32 = trunc i64 %s to i32
  %other = icmp ne i32 %s32, %tid
  %jo = shl i64 %j, 4
  %jo2 = add i64 %jo, 24
  %q = getelementptr inbounds i8, ptr %rec, i64 %jo2
  %a = load i64, ptr %q, align 8
  %qh = getelementptr inbounds i8, ptr %q, i64 8
  %b = load i64, ptr %qh, align 8
  %below = icmp ult i64 %a, %H
  %above = icmp ugt i64 %b, %L
  %some = icmp ult i64 %a, %b
  %o1 = and i1 %other, %below
  %o3 = and i1 %above, %some
  %overlap = and i1 %o1, %o3
  %front = icmp ule i64 %a, %L
  %cutL = and i1 %overlap, %front
  %nfront = xor i1 %front, true
  %cutH = and i1 %overlap, %nfront
  %L2 = select i1 %cutL, i64 %b, i64 %L
  %H2 = select i1 %cutH, i64 %a, i64 %H
  %j1 = add i64 %j, 1
  br label %head
set:
  %Ls = phi i64 [ %L, %head ], [ %L0, %start ]
  %Hs = phi i64 [ %H, %head ], [ %H0, %start ]
  %empty = icmp uge i64 %Ls, %Hs
  %Lf = select i1 %empty, i64 0, i64 %Ls
  %Hf = select i1 %empty, i64 0, i64 %Hs
  %px = getelementptr inbounds [{K} x i64], ptr @__enzyme_cc_omp_xlo, i64 0, i64 %c
  %pxh = getelementptr inbounds [{K} x i64], ptr @__enzyme_cc_omp_xhi, i64 0, i64 %c
  store i64 %Lf, ptr %px, align 8
  store i64 %Hf, ptr %pxh, align 8
  %c1 = add i64 %c, 1
  br label %cls
done:
  ret void
}}

define internal void @__enzyme_cc_omp_excl_end(ptr %rec, ptr %save) nounwind {{
entry:
  call void @llvm.memcpy.p0.p0.i64(ptr @__enzyme_cc_omp_xlo, ptr %save, i64 {8 * K}, i1 false)
  %sh = getelementptr inbounds i8, ptr %save, i64 {8 * K}
  call void @llvm.memcpy.p0.p0.i64(ptr @__enzyme_cc_omp_xhi, ptr %sh, i64 {8 * K}, i1 false)
  ret void
}}
"""

DECLS = (("@omp_get_active_level", "declare i32 @omp_get_active_level()"),
         ("@omp_get_level", "declare i32 @omp_get_level()"),
         ("@puts", "declare i32 @puts(ptr)"), ("@abort", "declare void @abort()"),
         ("@llvm.umin.i64", "declare i64 @llvm.umin.i64(i64, i64)"),
         ("@llvm.umax.i64", "declare i64 @llvm.umax.i64(i64, i64)"),
         ("@llvm.memcpy.p0.p0.i64", "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)"),
         ("@llvm.memset.p0.i64", "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)"))
