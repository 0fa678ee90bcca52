"""The OpenMP range runtime (openmp_ranges.py's docstring says what it is for): the thread-local
ranges, their tracking in the forward sweep (one range, or a class's two), the merge into the
thread's and the fork's record, and the reverse wrapper's exclusive ranges and add tests. IR text
that openmp._helpers adds to a module once."""
from .openmp_classes import K, R

# Thread-local state: the forward sweep's ranges (two per class: class k's second at k + K) and
# the reverse sweep's exclusive ranges (empty outside a reverse wrapper: every shared add
# atomic). A fork's record keeps each thread's ranges after its 24-byte head: R x {lo, hi} per
# thread (openmp._HELPERS). An empty range is [-1, 0).
def _ret_ranges(tag: str, l0: str, h0: str, l1: str, h1: str) -> str:
    """IR returning the two ranges [l0, h0) and [l1, h1) as __enzyme_cc_omp_insert's result."""
    ty, prev, out = "{ i64, i64, i64, i64 }", "poison", ""
    for j, v in enumerate((l0, h0, l1, h1)):
        out += f"  %{tag}{j} = insertvalue {ty} {prev}, i64 {v}, {j}\n"
        prev = f"%{tag}{j}"
    return out + f"  ret {ty} {prev}\n"


def _insert_and_store() -> str:
    """IR storing __enzyme_cc_omp_insert's decision for [a, e) and the ranges %l0, %h0, %l1,
    %h1 into %l0p, %h0p, %l1p, %h1p, and returning."""
    ty = "{ i64, i64, i64, i64 }"
    out = (f"  %r = call {ty} @__enzyme_cc_omp_insert(i64 %l0, i64 %h0, i64 %l1, i64 %h1, "
           "i64 %a, i64 %e)\n")
    for j, p in enumerate(("%l0p", "%h0p", "%l1p", "%h1p")):
        out += f"  %r{j} = extractvalue {ty} %r, {j}\n  store i64 %r{j}, ptr {p}, align 8\n"
    return out + "  ret void\n"


def _span_head(name: str) -> str:
    """The common case of __enzyme_cc_omp_<name>(l0p, h0p, l1p, h1p, a, e): [a, e) touches the
    first range, which grows to it; else it goes on at `far:`."""
    return (f"define internal void @__enzyme_cc_omp_{name}(ptr %l0p, ptr %h0p, ptr %l1p, "
            "ptr %h1p, i64 %a, i64 %e) alwaysinline nounwind {" + """
entry:
  %l0 = load i64, ptr %l0p, align 8
  %h0 = load i64, ptr %h0p, align 8
  %t0a = icmp ule i64 %a, %h0
  %t0b = icmp uge i64 %e, %l0
  %t0 = and i1 %t0a, %t0b
  %likely = call i1 @llvm.expect.i1(i1 %t0, i1 true)
  br i1 %likely, label %grow0, label %far
grow0:
  %n0l = call i64 @llvm.umin.i64(i64 %l0, i64 %a)
  %n0h = call i64 @llvm.umax.i64(i64 %h0, i64 %e)
  store i64 %n0l, ptr %l0p, align 8
  store i64 %n0h, ptr %h0p, align 8
  ret void
""")


_IR = f"""
@__enzyme_cc_omp_lo = internal thread_local global [{R} x i64] [{', '.join(['i64 -1'] * R)}], align 8
@__enzyme_cc_omp_hi = internal thread_local global [{R} x i64] zeroinitializer, align 8
@__enzyme_cc_omp_xlo = internal thread_local global [{R} x i64] zeroinitializer, align 8
@__enzyme_cc_omp_xhi = internal thread_local global [{R} x i64] zeroinitializer, align 8

define internal void @__enzyme_cc_omp_track(ptr %l0p, ptr %h0p, ptr %l1p, ptr %h1p, ptr %p, i64 %n) alwaysinline nounwind {{
entry:
  %a = ptrtoint ptr %p to i64
  %e = add i64 %a, %n
  call void @__enzyme_cc_omp_track_span(ptr %l0p, ptr %h0p, ptr %l1p, ptr %h1p, i64 %a, i64 %e)
  ret void
}}

; a gathered load's index into its index class's two ranges (openmp_index), biased so that the
; unsigned order of the ranges is the index's signed order
define internal void @__enzyme_cc_omp_track_index(ptr %l0p, ptr %h0p, ptr %l1p, ptr %h1p, i64 %i) alwaysinline nounwind {{
entry:
  %a = xor i64 %i, -9223372036854775808
  %e = add i64 %a, 1
  call void @__enzyme_cc_omp_track_span(ptr %l0p, ptr %h0p, ptr %l1p, ptr %h1p, i64 %a, i64 %e)
  ret void
}}

; a gathered load's base (its shadow) into its slot; where the slot held another (the base
; changed inside the loop: rare), the index ranges are first recorded as addresses from that one
define internal void @__enzyme_cc_omp_index_base(ptr %slot, ptr %b, ptr %l0p, ptr %h0p, ptr %l1p, ptr %h1p, ptr %i0l, ptr %i0h, ptr %i1l, ptr %i1h, i64 %s, i64 %n) alwaysinline nounwind {{
entry:
  %old = load ptr, ptr %slot, align 8
  %same = icmp eq ptr %old, %b
  %likely = call i1 @llvm.expect.i1(i1 %same, i1 true)
  br i1 %likely, label %done, label %other
other:
  call void @__enzyme_cc_omp_index_span(ptr %l0p, ptr %h0p, ptr %l1p, ptr %h1p, ptr %i0l, ptr %i0h, ptr %i1l, ptr %i1h, ptr %old, i64 %s, i64 %n)
  store ptr %b, ptr %slot, align 8
  br label %done
done:
  ret void
}}

; at a loop's exit: both index ranges of a class as the addresses base + i * s, n bytes each
; (no base, null, where no load it serves ran), into an address class's two ranges
define internal void @__enzyme_cc_omp_index_span(ptr %l0p, ptr %h0p, ptr %l1p, ptr %h1p, ptr %i0l, ptr %i0h, ptr %i1l, ptr %i1h, ptr %base, i64 %s, i64 %n) alwaysinline nounwind {{
entry:
  %some = icmp ne ptr %base, null
  br i1 %some, label %conv, label %done
conv:
  call void @__enzyme_cc_omp_index_one(ptr %l0p, ptr %h0p, ptr %l1p, ptr %h1p, ptr %i0l, ptr %i0h, ptr %base, i64 %s, i64 %n)
  call void @__enzyme_cc_omp_index_one(ptr %l0p, ptr %h0p, ptr %l1p, ptr %h1p, ptr %i1l, ptr %i1h, ptr %base, i64 %s, i64 %n)
  br label %done
done:
  ret void
}}

define internal void @__enzyme_cc_omp_index_one(ptr %l0p, ptr %h0p, ptr %l1p, ptr %h1p, ptr %ilp, ptr %ihp, ptr %base, i64 %s, i64 %n) alwaysinline nounwind {{
entry:
  %il = load i64, ptr %ilp, align 8
  %ih = load i64, ptr %ihp, align 8
  %some = icmp ult i64 %il, %ih
  br i1 %some, label %conv, label %done
conv:
  %first = xor i64 %il, -9223372036854775808
  %end = add i64 %ih, -1
  %last = xor i64 %end, -9223372036854775808
  %b = ptrtoint ptr %base to i64
  %o0 = mul i64 %first, %s
  %o1 = mul i64 %last, %s
  %a = add i64 %b, %o0
  %b1 = add i64 %b, %o1
  %e = add i64 %b1, %n
  call void @__enzyme_cc_omp_track_span_x(ptr %l0p, ptr %h0p, ptr %l1p, ptr %h1p, i64 %a, i64 %e)
  br label %done
done:
  ret void
}}

; a load that does not gather (openmp_affine.gathers): the first range grows to it
define internal void @__enzyme_cc_omp_track1(ptr %tlo, ptr %thi, ptr %p, i64 %n) alwaysinline nounwind {{
entry:
  %a = ptrtoint ptr %p to i64
  %e = add i64 %a, %n
  call void @__enzyme_cc_omp_track1_span(ptr %tlo, ptr %thi, i64 %a, i64 %e)
  ret void
}}

define internal void @__enzyme_cc_omp_track1_span(ptr %tlo, ptr %thi, i64 %a, i64 %e) alwaysinline nounwind {{
entry:
  %lo = load i64, ptr %tlo, align 8
  %hi = load i64, ptr %thi, align 8
  %lo2 = call i64 @llvm.umin.i64(i64 %lo, i64 %a)
  %hi2 = call i64 @llvm.umax.i64(i64 %hi, i64 %e)
  store i64 %lo2, ptr %tlo, align 8
  store i64 %hi2, ptr %thi, align 8
  ret void
}}

; [a, e) into a class's two ranges: where it overlaps or touches the first, that one grows (a
; loop's next element: the common case, inline and kept short, since a gathering loop tracks
; many loads per iteration); else __enzyme_cc_omp_insert decides, in a cold block without calls (a call
; there, rare as it is, made the loop keep its floating-point values on the stack: x86-64 has no
; callee-saved vector registers)
{_span_head('track_span')}far:
  %l1 = load i64, ptr %l1p, align 8
  %h1 = load i64, ptr %h1p, align 8
{_insert_and_store()}}}

; track_span where a loop ends, is entered or a function returns (index_one, merge_into, the
; spans openmp_affine hoists): a call, whatever the case. Inlined there, the whole decision was
; about 50 instructions per tracked class, most of a team's augmented function (LULESH's
; CalcMonotonicQRegionForElems region: 8,078 instructions after -O2, 4,629 with the common
; cases inline, 2,685 so; its primal 353), and the post-AD stage's time grew with it; these
; sites run once per loop or call, not per element (LULESH's and hydro's 2-thread gradients:
; +0.5 and +0.3 % instructions). Loops' own tracking keeps track_span's inline copy: there a
; gather jumping between two runs takes the rare case at every other element (hydro's corner
; indices). Where the target has it, the call preserves every register (x86-64, AArch64): a
; plain call made the loop around it keep its floating-point values on the stack (x86-64 has
; no callee-saved vector registers)
define internal void @__enzyme_cc_omp_track_span_x(ptr %l0p, ptr %h0p, ptr %l1p, ptr %h1p, i64 %a, i64 %e) alwaysinline nounwind {{
entry:
  call @CC@void @__enzyme_cc_omp_track_far(ptr %l0p, ptr %h0p, ptr %l1p, ptr %h1p, i64 %a, i64 %e)
  ret void
}}

define internal @CC@void @__enzyme_cc_omp_track_far(ptr %l0p, ptr %h0p, ptr %l1p, ptr %h1p, i64 %a, i64 %e) noinline nounwind {{
entry:
  %l0 = load i64, ptr %l0p, align 8
  %h0 = load i64, ptr %h0p, align 8
  %l1 = load i64, ptr %l1p, align 8
  %h1 = load i64, ptr %h1p, align 8
{_insert_and_store()}}}

; the two ranges after adding [a, e): the first grows where it touches it, else the second;
; else into an empty one; else the choice that covers the fewest new bytes: the
; nearer range grows to it, or (where the two ranges lie closer to each other than either to
; it) they become one and [a, e) the other
define internal {{ i64, i64, i64, i64 }} @__enzyme_cc_omp_insert(i64 %l0, i64 %h0, i64 %l1, i64 %h1, i64 %a, i64 %e) alwaysinline nounwind {{
entry:
  %t0a = icmp ule i64 %a, %h0
  %t0b = icmp uge i64 %e, %l0
  %t0 = and i1 %t0a, %t0b
  br i1 %t0, label %grow0, label %not0
grow0:
  %g0l = call i64 @llvm.umin.i64(i64 %l0, i64 %a)
  %g0h = call i64 @llvm.umax.i64(i64 %h0, i64 %e)
{_ret_ranges('v', '%g0l', '%g0h', '%l1', '%h1')}not0:
  %t1a = icmp ule i64 %a, %h1
  %t1b = icmp uge i64 %e, %l1
  %t1 = and i1 %t1a, %t1b
  br i1 %t1, label %grow1, label %apart
grow1:
  %g1l = call i64 @llvm.umin.i64(i64 %l1, i64 %a)
  %g1h = call i64 @llvm.umax.i64(i64 %h1, i64 %e)
{_ret_ranges('u', '%l0', '%h0', '%g1l', '%g1h')}apart:
  %none0 = icmp uge i64 %l0, %h0
  br i1 %none0, label %first, label %some0
first:
{_ret_ranges('f', '%a', '%e', '%l1', '%h1')}some0:
  %none1 = icmp uge i64 %l1, %h1
  br i1 %none1, label %second, label %both
second:
{_ret_ranges('s', '%l0', '%h0', '%a', '%e')}both:
  %right0 = icmp ugt i64 %a, %h0
  %ga0 = sub i64 %a, %h0
  %gb0 = sub i64 %l0, %e
  %g0 = select i1 %right0, i64 %ga0, i64 %gb0
  %right1 = icmp ugt i64 %a, %h1
  %ga1 = sub i64 %a, %h1
  %gb1 = sub i64 %l1, %e
  %g1 = select i1 %right1, i64 %ga1, i64 %gb1
  %after = icmp ugt i64 %l1, %h0
  %before = icmp ugt i64 %l0, %h1
  %gab1 = sub i64 %l1, %h0
  %gab2 = sub i64 %l0, %h1
  %gab3 = select i1 %before, i64 %gab2, i64 0
  %g01 = select i1 %after, i64 %gab1, i64 %gab3
  %gx = call i64 @llvm.umin.i64(i64 %g0, i64 %g1)
  %join = icmp ule i64 %g01, %gx
  br i1 %join, label %joined, label %pick
joined:
  %jl = call i64 @llvm.umin.i64(i64 %l0, i64 %l1)
  %jh = call i64 @llvm.umax.i64(i64 %h0, i64 %h1)
{_ret_ranges('j', '%jl', '%jh', '%a', '%e')}pick:
  %to0 = icmp ule i64 %g0, %g1
  %nl0 = call i64 @llvm.umin.i64(i64 %l0, i64 %a)
  %nh0 = call i64 @llvm.umax.i64(i64 %h0, i64 %e)
  %nl1 = call i64 @llvm.umin.i64(i64 %l1, i64 %a)
  %nh1 = call i64 @llvm.umax.i64(i64 %h1, i64 %e)
  %pl0 = select i1 %to0, i64 %nl0, i64 %l0
  %ph0 = select i1 %to0, i64 %nh0, i64 %h0
  %pl1 = select i1 %to0, i64 %l1, i64 %nl1
  %ph1 = select i1 %to0, i64 %h1, i64 %nh1
{_ret_ranges('p', '%pl0', '%ph0', '%pl1', '%ph1')}}}

; [a, e) into the thread's two ranges of class k, unless empty
define internal void @__enzyme_cc_omp_merge_into(i64 %k, i64 %a, i64 %e) alwaysinline nounwind {{
entry:
  %some = icmp ult i64 %a, %e
  br i1 %some, label %merge, label %done
merge:
  %k2 = add i64 %k, {K}
  %g0 = getelementptr inbounds [{R} x i64], ptr @__enzyme_cc_omp_lo, i64 0, i64 %k
  %gh0 = getelementptr inbounds [{R} x i64], ptr @__enzyme_cc_omp_hi, i64 0, i64 %k
  %g1 = getelementptr inbounds [{R} x i64], ptr @__enzyme_cc_omp_lo, i64 0, i64 %k2
  %gh1 = getelementptr inbounds [{R} x i64], ptr @__enzyme_cc_omp_hi, i64 0, i64 %k2
  call void @__enzyme_cc_omp_track_span_x(ptr %g0, ptr %gh0, ptr %g1, ptr %gh1, i64 %a, i64 %e)
  br label %done
done:
  ret void
}}

; a function's ranges of class k into the thread's (at a return of a team's augmented function):
; out of line where either holds something (a class the function never tracks is empty here
; once its ranges are registers, and the call goes), so that each return does not carry the
; merges of every class it tracks inline
define internal void @__enzyme_cc_omp_track_merge(ptr %l0p, ptr %h0p, ptr %l1p, ptr %h1p, i64 %k) alwaysinline nounwind {{
entry:
  %a0 = load i64, ptr %l0p, align 8
  %e0 = load i64, ptr %h0p, align 8
  %a1 = load i64, ptr %l1p, align 8
  %e1 = load i64, ptr %h1p, align 8
  %some0 = icmp ult i64 %a0, %e0
  %some1 = icmp ult i64 %a1, %e1
  %some = or i1 %some0, %some1
  br i1 %some, label %merge, label %done
merge:
  call void @__enzyme_cc_omp_merge_out(i64 %k, i64 %a0, i64 %e0, i64 %a1, i64 %e1)
  br label %done
done:
  ret void
}}

define internal void @__enzyme_cc_omp_merge_out(i64 %k, i64 %a0, i64 %e0, i64 %a1, i64 %e1) noinline nounwind {{
entry:
  call void @__enzyme_cc_omp_merge_into(i64 %k, i64 %a0, i64 %e0)
  call void @__enzyme_cc_omp_merge_into(i64 %k, i64 %a1, i64 %e1)
  ret void
}}

; [p, p + n) inside one of the thread's exclusive ranges of class k
define internal i1 @__enzyme_cc_omp_own_range(ptr %p, i64 %n, i64 %k) alwaysinline nounwind {{
entry:
  %a = ptrtoint ptr %p to i64
  %k2 = add i64 %k, {K}
  %in0 = call i1 @__enzyme_cc_omp_own_one(i64 %a, i64 %n, i64 %k)
  %in1 = call i1 @__enzyme_cc_omp_own_one(i64 %a, i64 %n, i64 %k2)
  %in = or i1 %in0, %in1
  ret i1 %in
}}

define internal i1 @__enzyme_cc_omp_own_one(i64 %a, i64 %n, i64 %k) alwaysinline nounwind {{
entry:
  ; xlo <= a && a + n <= xhi as one unsigned compare, a - xlo < w, with w = xhi - xlo - n + 1
  ; (0 when the range holds fewer than n bytes): w is loop-invariant, so a loop of adds pays a
  ; subtraction and a compare per add
  %plo = getelementptr inbounds [{R} x i64], ptr @__enzyme_cc_omp_xlo, i64 0, i64 %k
  %phi = getelementptr inbounds [{R} x i64], ptr @__enzyme_cc_omp_xhi, i64 0, i64 %k
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

; ... for four classes, each with its two ranges
define internal void @__enzyme_cc_omp_range_assert({', '.join(f'ptr %l{j}, ptr %h{j}' for j in range(8))}, ptr %p, i64 %n) noinline nounwind {{
entry:
  %a = ptrtoint ptr %p to i64
  %e = add i64 %a, %n
{''.join(f'  %o{j} = call i1 @__enzyme_cc_omp_in_range(ptr %l{j}, ptr %h{j}, i64 %a, i64 %e){chr(10)}' for j in range(8))}  %o01 = or i1 %o0, %o1
  %o23 = or i1 %o2, %o3
  %o45 = or i1 %o4, %o5
  %o67 = or i1 %o6, %o7
  %o03 = or i1 %o01, %o23
  %o47 = or i1 %o45, %o67
  %ok = or i1 %o03, %o47
  call void @__enzyme_cc_omp_range_ok(i1 %ok)
  ret void
}}

define internal void @__enzyme_cc_omp_range_ok(i1 %ok) alwaysinline nounwind {{
entry:
  br i1 %ok, label %fine, label %fail
fine:
  ret void
fail:
  %m = call i32 @puts(ptr @__enzyme_cc_omp_range_msg)
  call void @abort()
  unreachable
}}
@__enzyme_cc_omp_range_msg = internal constant [50 x i8] c"enzyme-cc: OpenMP range check: load outside range\\00"

; ENZYME_CC_OMP_RANGE_CHECK: a load tracked by its index (openmp_index) lies at its base's shadow
; plus the index times the stride, the address its index ranges are made into
define internal void @__enzyme_cc_omp_index_assert(ptr %p, ptr %b, i64 %i, i64 %s) noinline nounwind {{
entry:
  %a = ptrtoint ptr %p to i64
  %base = ptrtoint ptr %b to i64
  %o = mul i64 %i, %s
  %want = add i64 %base, %o
  %ok = icmp eq i64 %a, %want
  call void @__enzyme_cc_omp_range_ok(i1 %ok)
  ret void
}}

; ENZYME_CC_OMP_RANGE_CHECK: an add of a versioned loop's plain copy outside the exclusive range
define internal void @__enzyme_cc_omp_own_fail() noinline nounwind {{
entry:
  %m = call i32 @puts(ptr @__enzyme_cc_omp_own_msg)
  call void @abort()
  unreachable
}}
@__enzyme_cc_omp_own_msg = internal constant [59 x i8] c"enzyme-cc: OpenMP range check: plain add outside own range\\00"

; this thread's slot of the record: R x {{lo, hi}}
define internal ptr @__enzyme_cc_omp_range_slot(ptr %rec, i32 %tid) alwaysinline nounwind {{
entry:
  %t = zext i32 %tid to i64
  %o = mul i64 %t, {16 * R}
  %o2 = add i64 %o, 24
  %s = getelementptr inbounds i8, ptr %rec, i64 %o2
  ret ptr %s
}}

; forward wrapper: save the thread's ranges (an enclosing region's) in %save, start empty ones
define internal void @__enzyme_cc_omp_track_begin(ptr %rec, i1 %track, ptr %save) nounwind {{
entry:
  call void @llvm.memcpy.p0.p0.i64(ptr %save, ptr @__enzyme_cc_omp_lo, i64 {8 * R}, i1 false)
  %sh = getelementptr inbounds i8, ptr %save, i64 {8 * R}
  call void @llvm.memcpy.p0.p0.i64(ptr %sh, ptr @__enzyme_cc_omp_hi, i64 {8 * R}, i1 false)
  call void @llvm.memset.p0.i64(ptr @__enzyme_cc_omp_lo, i8 -1, i64 {8 * R}, i1 false)
  call void @llvm.memset.p0.i64(ptr @__enzyme_cc_omp_hi, i8 0, i64 {8 * R}, i1 false)
  ret void
}}

; ... and keep this fork's ranges in the record, put the saved ones back with this fork's added
define internal void @__enzyme_cc_omp_track_end(ptr %rec, ptr %save) nounwind {{
entry:
  %tid = call i32 @omp_get_thread_num()
  %slot = call ptr @__enzyme_cc_omp_range_slot(ptr %rec, i32 %tid)
  br label %head
head:
  %k = phi i64 [ 0, %entry ], [ %k1, %body ]
  %more = icmp ult i64 %k, {R}
  br i1 %more, label %body, label %restore
body:
  %plo = getelementptr inbounds [{R} x i64], ptr @__enzyme_cc_omp_lo, i64 0, i64 %k
  %phi = getelementptr inbounds [{R} x i64], ptr @__enzyme_cc_omp_hi, i64 0, i64 %k
  %lo = load i64, ptr %plo, align 8
  %hi = load i64, ptr %phi, align 8
  %k2 = shl i64 %k, 4
  %r = getelementptr inbounds i8, ptr %slot, i64 %k2
  store i64 %lo, ptr %r, align 8
  %rh = getelementptr inbounds i8, ptr %r, i64 8
  store i64 %hi, ptr %rh, align 8
  %k1 = add i64 %k, 1
  br label %head
restore:
  call void @llvm.memcpy.p0.p0.i64(ptr @__enzyme_cc_omp_lo, ptr %save, i64 {8 * R}, i1 false)
  %sh = getelementptr inbounds i8, ptr %save, i64 {8 * R}
  call void @llvm.memcpy.p0.p0.i64(ptr @__enzyme_cc_omp_hi, ptr %sh, i64 {8 * R}, i1 false)
  br label %mhead
mhead:
  %j = phi i64 [ 0, %restore ], [ %j1, %mbody ]
  %mmore = icmp ult i64 %j, {R}
  br i1 %mmore, label %mbody, label %done
mbody:
  %j16 = shl i64 %j, 4
  %q = getelementptr inbounds i8, ptr %slot, i64 %j16
  %a = load i64, ptr %q, align 8
  %qh = getelementptr inbounds i8, ptr %q, i64 8
  %e = load i64, ptr %qh, align 8
  %c = urem i64 %j, {K}
  call void @__enzyme_cc_omp_merge_into(i64 %c, i64 %a, i64 %e)
  %j1 = add i64 %j, 1
  br label %mhead
done:
  ret void
}}

; reverse wrapper: save the exclusive ranges in %save; each range of this thread gets its part
; that no range of any other thread touches (empty when the region is not trackable or runs
; inside another team, whose other threads may add there too: also a team of one nested in an
; active team, where omp_get_active_level is 1 but the active team is the enclosing one)
define internal void @__enzyme_cc_omp_excl_begin(ptr %rec, i1 %track, ptr %save) nounwind {{
entry:
  call void @llvm.memcpy.p0.p0.i64(ptr %save, ptr @__enzyme_cc_omp_xlo, i64 {8 * R}, i1 false)
  %sh = getelementptr inbounds i8, ptr %save, i64 {8 * R}
  call void @llvm.memcpy.p0.p0.i64(ptr %sh, ptr @__enzyme_cc_omp_xhi, i64 {8 * R}, i1 false)
  call void @llvm.memset.p0.i64(ptr @__enzyme_cc_omp_xlo, i8 0, i64 {8 * R}, i1 false)
  call void @llvm.memset.p0.i64(ptr @__enzyme_cc_omp_xhi, i8 0, i64 {8 * R}, i1 false)
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
  %nc = mul i64 %n, {R}
  br label %cls
cls:
  %c = phi i64 [ 0, %mine ], [ %c1, %set ]
  %morec = icmp ult i64 %c, {R}
  br i1 %morec, label %start, label %done
start:
  %c2 = shl i64 %c, 4
  %r = getelementptr inbounds i8, ptr %own, i64 %c2
  %L0 = load i64, ptr %r, align 8
  %rh = getelementptr inbounds i8, ptr %r, i64 8
  %H0 = load i64, ptr %rh, align 8
  %none = icmp uge i64 %L0, %H0                   ; a range this thread never loaded through
  br i1 %none, label %set, label %head
head:
  %j = phi i64 [ 0, %start ], [ %j1, %next ]
  %L = phi i64 [ %L0, %start ], [ %L2, %next ]
  %H = phi i64 [ %H0, %start ], [ %H2, %next ]
  %more = icmp ult i64 %j, %nc
  br i1 %more, label %body, label %set
body:
  %s = udiv i64 %j, {R}
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
  br i1 %overlap, label %cut, label %next       ; (most ranges are empty or apart: a short loop)
cut:
  ; the other range covers the start: cut the front; the end: cut the back; lying inside
  ; (another thread's stray load): keep the larger part
  %front = icmp ule i64 %a, %L
  %back = icmp uge i64 %b, %H
  %lpart = sub i64 %a, %L
  %hpart = sub i64 %H, %b
  %keepL = icmp uge i64 %lpart, %hpart
  %nfront = xor i1 %front, true
  %nback = xor i1 %back, true
  %nkeepL = xor i1 %keepL, true
  %inner = and i1 %nback, %nkeepL
  %toL = or i1 %front, %inner
  %Lc = select i1 %toL, i64 %b, i64 %L
  %Hc = select i1 %toL, i64 %H, i64 %a
  br label %next
next:
  %L2 = phi i64 [ %L, %body ], [ %Lc, %cut ]
  %H2 = phi i64 [ %H, %body ], [ %Hc, %cut ]
  %j1 = add i64 %j, 1
  br label %head
set:
  %Ls = phi i64 [ %L, %head ], [ %L0, %start ]
  %Hs = phi i64 [ %H, %head ], [ %H0, %start ]
  %empty = icmp uge i64 %Ls, %Hs
  %Lf = select i1 %empty, i64 0, i64 %Ls
  %Hf = select i1 %empty, i64 0, i64 %Hs
  %px = getelementptr inbounds [{R} x i64], ptr @__enzyme_cc_omp_xlo, i64 0, i64 %c
  %pxh = getelementptr inbounds [{R} x i64], ptr @__enzyme_cc_omp_xhi, i64 0, i64 %c
  store i64 %Lf, ptr %px, align 8
  store i64 %Hf, ptr %pxh, align 8
  %c1 = add i64 %c, 1
  br label %cls
done:
  ret void
}}

define internal void @__enzyme_cc_omp_excl_end(ptr %rec, ptr %save) nounwind {{
entry:
  call void @llvm.memcpy.p0.p0.i64(ptr @__enzyme_cc_omp_xlo, ptr %save, i64 {8 * R}, i1 false)
  %sh = getelementptr inbounds i8, ptr %save, i64 {8 * R}
  call void @llvm.memcpy.p0.p0.i64(ptr @__enzyme_cc_omp_xhi, ptr %sh, i64 {8 * R}, i1 false)
  ret void
}}
"""

DECLS = (("@omp_get_active_level", "declare i32 @omp_get_active_level()"),
         ("@omp_get_level", "declare i32 @omp_get_level()"),
         ("@puts", "declare i32 @puts(ptr)"), ("@abort", "declare void @abort()"),
         ("@llvm.umin.i64", "declare i64 @llvm.umin.i64(i64, i64)"),
         ("@llvm.expect.i1", "declare i1 @llvm.expect.i1(i1, i1)"),
         ("@llvm.umax.i64", "declare i64 @llvm.umax.i64(i64, i64)"),
         ("@llvm.memcpy.p0.p0.i64", "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)"),
         ("@llvm.memset.p0.i64", "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)"))


def ir(triple: str) -> str:
    """The runtime's IR text for a module of this target triple."""
    return _IR.replace("@CC@", "preserve_allcc " if triple.startswith(PRESERVE_ALL) else "")


# targets whose backends implement preserve_allcc
PRESERVE_ALL = ("x86_64", "aarch64", "arm64")
