"""OpenMP reverse mode: the per-thread tapes of a parallel region's derivative (IR helpers used
by ad/parallel/openmp.py).

Thread k of every team a gradient forks pushes onto one tape of its own for the whole gradient
(LIFO across forks: the reverse forks run in the reverse order of the forward ones), like the
serial code's single tape. Before, each fork gave every thread a fresh tape that grew by realloc
doubling and was freed after the reverse fork: a region in a time loop page-faulted in and copied
its tapes once per fork (docs/performance.md, "OpenMP").
"""

from .openmp_classes import R

IR = r"""
; The tapes live in a set {i64 capacity, i64 0, headers[capacity]} (a header every 128 bytes: two
; threads' headers, written at every push of a loop that calls out, never share a cache line,
; where 32 bytes apart they made the team's forward sweeps stall on each other's stores) hung on
; the forking code's own
; tape as a deferred-free node (found again by its deallocator @__enzyme_cc_omp_set_free, freed
; with that tape: a nested region's set hangs on the outer thread's tape). Each fork gets a
; record {i32 team size, i32 capacity, i64 critical-section ticket counter, ptr node, capacity x
; R x {i64 lo, i64 hi} adjoint ranges (openmp_ranges)}; it names the node because the set moves
; when a larger team needs more headers (only in the forking thread, between its forks).
define internal ptr @__enzyme_cc_omp_tapes(ptr %tape, i32 %want) nounwind {
entry:
  %head = getelementptr inbounds i8, ptr %tape, i64 24
  %first = load ptr, ptr %head
  br label %find
find:
  %n = phi ptr [ %first, %entry ], [ %next, %step ]
  %end = icmp eq ptr %n, null
  br i1 %end, label %make, label %look
look:
  %fnp = getelementptr inbounds i8, ptr %n, i64 24
  %fn = load ptr, ptr %fnp
  %mine = icmp eq ptr %fn, @__enzyme_cc_omp_set_free
  br i1 %mine, label %found, label %step
step:
  %next = load ptr, ptr %n
  br label %find
make:
  call void @__enzyme_cc_defer_free(ptr %tape, ptr null, ptr null, ptr @__enzyme_cc_omp_set_free)
  %made = load ptr, ptr %head
  br label %found
found:
  %node = phi ptr [ %n, %look ], [ %made, %make ]
  %sp = getelementptr inbounds i8, ptr %node, i64 8
  %set = load ptr, ptr %sp
  %noset = icmp eq ptr %set, null
  br i1 %noset, label %size, label %old
old:
  %oc = load i64, ptr %set
  br label %size
size:
  %have = phi i64 [ 0, %found ], [ %oc, %old ]
  %w = zext i32 %want to i64
  %small = icmp ult i64 %have, %w
  br i1 %small, label %grow, label %rec
grow:
  %hb = shl i64 %w, 7
  %bytes = add i64 %hb, 16
  %ns = call ptr @realloc(ptr %set, i64 %bytes)
  %oom = icmp eq ptr %ns, null
  br i1 %oom, label %die, label %zero
die:
  call void @__enzyme_cc_omp_oom()
  unreachable
zero:
  %ob = shl i64 %have, 7
  %oo = add i64 %ob, 16
  %fresh = getelementptr inbounds i8, ptr %ns, i64 %oo
  %nb = sub i64 %bytes, %oo
  call void @llvm.memset.p0.i64(ptr %fresh, i8 0, i64 %nb, i1 false)
  store i64 %w, ptr %ns
  %pad = getelementptr inbounds i8, ptr %ns, i64 8
  store i64 0, ptr %pad
  store ptr %ns, ptr %sp
  br label %rec
rec:
  %cap64 = phi i64 [ %have, %size ], [ %w, %zero ]
  %cap = trunc i64 %cap64 to i32
  %rb = mul i64 %cap64, @RANGE_BYTES@
  %rsz = add i64 %rb, 24
  %r = call ptr @calloc(i64 1, i64 %rsz)
  %capp = getelementptr inbounds i8, ptr %r, i64 4
  store i32 %cap, ptr %capp
  %np = getelementptr inbounds i8, ptr %r, i64 16
  store ptr %node, ptr %np
  ret ptr %r
}

; this thread's header; the forward sweep records the team size, the reverse checks it
define internal ptr @__enzyme_cc_omp_tape(ptr %r, i1 %fwd) nounwind {
entry:
  %tid = call i32 @omp_get_thread_num()
  %nt = call i32 @omp_get_num_threads()
  %capp = getelementptr inbounds i8, ptr %r, i64 4
  %cap = load i32, ptr %capp
  br i1 %fwd, label %f, label %v
f:
  store atomic i32 %nt, ptr %r monotonic, align 4
  %okf = icmp ult i32 %tid, %cap
  br i1 %okf, label %ok, label %bad
v:
  %was = load atomic i32, ptr %r monotonic, align 4
  %okv = icmp eq i32 %was, %nt
  br i1 %okv, label %ok, label %bad
bad:
  %w = call i64 @write(i32 2, ptr @__enzyme_cc_omp_msg, i64 112)
  call void @abort()
  unreachable
ok:
  %np = getelementptr inbounds i8, ptr %r, i64 16
  %node = load ptr, ptr %np
  %sp = getelementptr inbounds i8, ptr %node, i64 8
  %set = load ptr, ptr %sp
  %t = zext i32 %tid to i64
  %o = shl i64 %t, 7
  %o2 = add i64 %o, 16
  %h = getelementptr inbounds i8, ptr %set, i64 %o2
  %b = load ptr, ptr %h
  %none = icmp eq ptr %b, null
  %start = and i1 %fwd, %none
  br i1 %start, label %take, label %done
take:
  %slot = call ptr @__enzyme_cc_omp_spare(i64 %t)
  %sb = atomicrmw xchg ptr %slot, ptr null acquire
  %nosb = icmp eq ptr %sb, null
  br i1 %nosb, label %done, label %reuse
reuse:
  %c = load i64, ptr %sb
  store ptr %sb, ptr %h
  %hcap = getelementptr inbounds i8, ptr %h, i64 16
  store i64 %c, ptr %hcap
  br label %done
done:
  ret ptr %h
}

; after the reverse fork: the record goes, the set stays for the next forks
define internal void @__enzyme_cc_omp_tapes_end(ptr %r) nounwind {
entry:
  call void @free(ptr %r)
  ret void
}

; Spare tape buffers of the threads, one slot per thread number (modulo 64), kept between
; gradients as the serial tape's @__enzyme_cc_spare is (atomic exchanges: a thread finding its
; slot taken starts empty or frees).
@__enzyme_cc_omp_spares = internal global [64 x ptr] zeroinitializer, align 8

define internal ptr @__enzyme_cc_omp_spare(i64 %k) alwaysinline nounwind {
entry:
  %i = and i64 %k, 63
  %p = getelementptr inbounds [64 x ptr], ptr @__enzyme_cc_omp_spares, i64 0, i64 %i
  ret ptr %p
}

; the set's deallocator (called with the set, then with null): each thread's deferred frees,
; its buffer back to its spare slot
define internal void @__enzyme_cc_omp_set_free(ptr %set) nounwind {
entry:
  %noset = icmp eq ptr %set, null
  br i1 %noset, label %out, label %start
start:
  %cap = load i64, ptr %set
  br label %head
head:
  %k = phi i64 [ 0, %start ], [ %k1, %next ]
  %more = icmp ult i64 %k, %cap
  br i1 %more, label %body, label %done
body:
  %o = shl i64 %k, 7
  %o2 = add i64 %o, 16
  %h = getelementptr inbounds i8, ptr %set, i64 %o2
  %listp = getelementptr inbounds i8, ptr %h, i64 24
  call void @__enzyme_cc_free_deferred(ptr %listp)
  %b = load ptr, ptr %h
  %nob = icmp eq ptr %b, null
  br i1 %nob, label %next, label %keep
keep:
  %hcap = getelementptr inbounds i8, ptr %h, i64 16
  %c = load i64, ptr %hcap
  store i64 %c, ptr %b
  %slot = call ptr @__enzyme_cc_omp_spare(i64 %k)
  %x = cmpxchg ptr %slot, ptr null, ptr %b acq_rel monotonic
  %kept = extractvalue { ptr, i1 } %x, 1
  br i1 %kept, label %next, label %drop
drop:
  call void @free(ptr %b)
  br label %next
next:
  %k1 = add i64 %k, 1
  br label %head
done:
  call void @free(ptr %set)
  br label %out
out:
  ret void
}
""".replace("@RANGE_BYTES@", str(16 * R))
