"""IR of the tape the generated code keeps its primal values on, and what a derivative of
generated code does with it (higher order: an outer derivative differentiating an inner one).

The values an inner derivative pushes on its tape are active for an outer derivative (the inner
reverse sweep reads them back), so the outer derivative gives every tape a shadow tape that
takes the same pushes and pops (rules/tape.py). The tape helpers are never differentiated
themselves: their spare-buffer exchange and their realloc of untyped bytes have no derivative.
"""
import os

_OOM_MESSAGE = "enzyme-cc: out of memory: a derivative's tape could not grow; abort\n"


def oom_ir(tag: str) -> str:
    """@__enzyme_cc_<tag>_oom(): malloc or realloc returned null for a tape; say so on stderr and
    abort (a bare abort would look like a crash of the user's program). One per runtime piece
    that may be linked without the others (needs @write and @abort declared)."""
    n = len(_OOM_MESSAGE.encode())
    text = _OOM_MESSAGE.replace("\n", "\\0A")
    return (f'@__enzyme_cc_{tag}_oom_msg = private unnamed_addr constant [{n + 1} x i8] '
            f'c"{text}\\00"\n\n'
            f"define internal void @__enzyme_cc_{tag}_oom() noinline cold noreturn nounwind {{\n"
            f"entry:\n  %w = call i64 @write(i32 2, ptr @__enzyme_cc_{tag}_oom_msg, i64 {n})\n"
            f"  call void @abort()\n  unreachable\n}}\n")


TAPE = """
define internal ptr @__enzyme_cc_push(ptr %t, i64 %n) alwaysinline nounwind {
entry:
  %topp = getelementptr inbounds i8, ptr %t, i64 8
  %capp = getelementptr inbounds i8, ptr %t, i64 16
  %top = load i64, ptr %topp
  %cap = load i64, ptr %capp
  %new = add i64 %top, %n
  %ok = icmp ule i64 %new, %cap
  br i1 %ok, label %fast, label %slow
slow:
  call void @__enzyme_cc_grow(ptr %t, i64 %new)
  br label %fast
fast:
  %base = load ptr, ptr %t
  store i64 %new, ptr %topp
  %p = getelementptr inbounds i8, ptr %base, i64 %top
  ret ptr %p
}

define internal ptr @__enzyme_cc_pop(ptr %t, i64 %n) alwaysinline nounwind {
entry:
  %topp = getelementptr inbounds i8, ptr %t, i64 8
  %top = load i64, ptr %topp
  %new = sub i64 %top, %n
  store i64 %new, ptr %topp
  %base = load ptr, ptr %t
  %p = getelementptr inbounds i8, ptr %base, i64 %new
  ret ptr %p
}

; The same on a function-local copy %l of the header's {base, top, cap} (ad/tape/tape_local.py):
; once inlined, SROA keeps top, cap and base in registers. Grow works on the header (whose
; base and cap the copy always equals; only top is stale) and the copy takes its new base and cap.
; Helpers that never grow (pop, push_nc, reserve_check) read the same three fields and run on the
; copy as they are.
define internal ptr @__enzyme_cc_lpush(ptr %t, ptr %l, i64 %n) alwaysinline nounwind {
entry:
  %topp = getelementptr inbounds i8, ptr %l, i64 8
  %capp = getelementptr inbounds i8, ptr %l, i64 16
  %top = load i64, ptr %topp
  %cap = load i64, ptr %capp
  %new = add i64 %top, %n
  %ok = icmp ule i64 %new, %cap
  br i1 %ok, label %fast, label %slow
slow:
  call void @__enzyme_cc_grow(ptr %t, i64 %new)
  %nb = load ptr, ptr %t
  %hcapp = getelementptr inbounds i8, ptr %t, i64 16
  %nc = load i64, ptr %hcapp
  store ptr %nb, ptr %l
  store i64 %nc, ptr %capp
  br label %fast
fast:
  %base = load ptr, ptr %l
  store i64 %new, ptr %topp
  %p = getelementptr inbounds i8, ptr %base, i64 %top
  ret ptr %p
}

; A loop whose trip count is known on entry reserves its iterations' pushes once
; (ad/plan/tape_reserve.py): reserve returns the end of the reserved bytes (saturated: a count that
; overflows makes grow fail and abort), the loop's pushes are unchecked, and its exit checks
; that the pushes stayed within the reservation (a safety net: a miscounted loop aborts).
define internal i64 @__enzyme_cc_reserve(ptr %t, i64 %n) alwaysinline nounwind {
entry:
  %topp = getelementptr inbounds i8, ptr %t, i64 8
  %capp = getelementptr inbounds i8, ptr %t, i64 16
  %top = load i64, ptr %topp
  %cap = load i64, ptr %capp
  %new = call i64 @llvm.uadd.sat.i64(i64 %top, i64 %n)
  %ok = icmp ule i64 %new, %cap
  br i1 %ok, label %done, label %slow
slow:
  call void @__enzyme_cc_grow(ptr %t, i64 %new)
  br label %done
done:
  ret i64 %new
}

define internal ptr @__enzyme_cc_push_nc(ptr %t, i64 %n) alwaysinline nounwind {
entry:
  %topp = getelementptr inbounds i8, ptr %t, i64 8
  %top = load i64, ptr %topp
  %new = add i64 %top, %n
  %base = load ptr, ptr %t
  store i64 %new, ptr %topp
  %p = getelementptr inbounds i8, ptr %base, i64 %top
  ret ptr %p
}

define internal void @__enzyme_cc_reserve_check(ptr %t, i64 %end) alwaysinline nounwind {
entry:
  %topp = getelementptr inbounds i8, ptr %t, i64 8
  %top = load i64, ptr %topp
  %bad = icmp ugt i64 %top, %end
  br i1 %bad, label %fail, label %ok
fail:
  call void @__enzyme_cc_reserve_failed()
  unreachable
ok:
  ret void
}

; A tape reversed with enzyme_nofree by a function whose reverse frees its own blocks is marked
; spent (top = -1): a second reverse would read freed memory, so it stops here with a message.
@__enzyme_cc_spent_msg = private unnamed_addr constant [208 x i8] c"enzyme-cc: error: __enzyme_reverse on a tape that an enzyme_nofree reverse already used, of a function whose reverse frees memory it allocated; hint: reverse each tape once, or run __enzyme_augmentfwd again\\0A\\00"

define internal void @__enzyme_cc_tape_check(ptr %t) nounwind {
entry:
  %topp = getelementptr inbounds i8, ptr %t, i64 8
  %top = load i64, ptr %topp
  %spent = icmp eq i64 %top, -1
  br i1 %spent, label %fail, label %ok
fail:
  %err = load ptr, ptr @stderr
  %r = call i32 @fputs(ptr @__enzyme_cc_spent_msg, ptr %err)
  call void @abort()
  unreachable
ok:
  ret void
}

@__enzyme_cc_reserve_msg = private unnamed_addr constant [86 x i8] c"enzyme-cc: internal error: a loop pushed more onto the tape than its trip count said\\0A\\00"

define internal void @__enzyme_cc_reserve_failed() noinline cold noreturn nounwind {
entry:
  %err = load ptr, ptr @stderr
  %r = call i32 @fputs(ptr @__enzyme_cc_reserve_msg, ptr %err)
  call void @abort()
  unreachable
}

; reserve on the function-local copy (growing: see lpush)
define internal i64 @__enzyme_cc_lreserve(ptr %t, ptr %l, i64 %n) alwaysinline nounwind {
entry:
  %topp = getelementptr inbounds i8, ptr %l, i64 8
  %capp = getelementptr inbounds i8, ptr %l, i64 16
  %top = load i64, ptr %topp
  %cap = load i64, ptr %capp
  %new = call i64 @llvm.uadd.sat.i64(i64 %top, i64 %n)
  %ok = icmp ule i64 %new, %cap
  br i1 %ok, label %done, label %slow
slow:
  call void @__enzyme_cc_grow(ptr %t, i64 %new)
  %nb = load ptr, ptr %t
  %hcapp = getelementptr inbounds i8, ptr %t, i64 16
  %nc = load i64, ptr %hcapp
  store ptr %nb, ptr %l
  store i64 %nc, ptr %capp
  br label %done
done:
  ret i64 %new
}

; header -> copy (at entry, after calls given the header); copy's top -> header (before them)
define internal void @__enzyme_cc_tape_get(ptr %l, ptr %t) alwaysinline nounwind {
entry:
  %b = load ptr, ptr %t
  store ptr %b, ptr %l
  %ttop = getelementptr inbounds i8, ptr %t, i64 8
  %top = load i64, ptr %ttop
  %ltop = getelementptr inbounds i8, ptr %l, i64 8
  store i64 %top, ptr %ltop
  %tcap = getelementptr inbounds i8, ptr %t, i64 16
  %cap = load i64, ptr %tcap
  %lcap = getelementptr inbounds i8, ptr %l, i64 16
  store i64 %cap, ptr %lcap
  ret void
}

define internal void @__enzyme_cc_tape_put(ptr %t, ptr %l) alwaysinline nounwind {
entry:
  %ltop = getelementptr inbounds i8, ptr %l, i64 8
  %top = load i64, ptr %ltop
  %ttop = getelementptr inbounds i8, ptr %t, i64 8
  store i64 %top, ptr %ttop
  ret void
}

; One spare tape buffer per process: a gradient starts on the buffer the previous one released,
; so repeated gradient calls (an optimizer loop) grow and copy their tape once, not every call.
; The spare is kept whatever its size: dropping large ones made every call of a large gradient
; regrow (and copy) its tape from 4 KiB, several times slower (docs/performance.md).
; Taken and given back with atomic exchanges (thread-safe; a thread finding it taken starts
; empty). A spare buffer keeps its capacity in its first 8 bytes (buffers are >= 4096 bytes).
@__enzyme_cc_spare = internal global ptr null, align 8

; The top of the tape, and setting it back (reverse vector mode runs each lane's reverse sweep
; from the same top): helpers, so that an outer derivative does the same on its shadow tape.
define internal i64 @__enzyme_cc_tape_top(ptr %t) alwaysinline nounwind {
entry:
  %topp = getelementptr inbounds i8, ptr %t, i64 8
  %top = load i64, ptr %topp
  ret i64 %top
}

define internal void @__enzyme_cc_tape_settop(ptr %t, i64 %top) alwaysinline nounwind {
entry:
  %topp = getelementptr inbounds i8, ptr %t, i64 8
  store i64 %top, ptr %topp
  ret void
}

define internal void @__enzyme_cc_tape_start(ptr %t) alwaysinline nounwind {
entry:
  %b = atomicrmw xchg ptr @__enzyme_cc_spare, ptr null acquire
  %none = icmp eq ptr %b, null
  br i1 %none, label %fresh, label %reuse
reuse:
  %c = load i64, ptr %b
  br label %done
fresh:
  br label %done
done:
  %cap = phi i64 [ %c, %reuse ], [ 0, %fresh ]
  store ptr %b, ptr %t
  %listp = getelementptr inbounds i8, ptr %t, i64 24
  store ptr null, ptr %listp
  %topp = getelementptr inbounds i8, ptr %t, i64 8
  store i64 0, ptr %topp
  %capp = getelementptr inbounds i8, ptr %t, i64 16
  store i64 %cap, ptr %capp
  ret void
}

define internal void @__enzyme_cc_tape_end(ptr %t) noinline nounwind {
entry:
  %listp = getelementptr inbounds i8, ptr %t, i64 24
  call void @__enzyme_cc_free_deferred(ptr %listp)
  %b = load ptr, ptr %t
  %capp = getelementptr inbounds i8, ptr %t, i64 16
  %c = load i64, ptr %capp
  %none = icmp eq ptr %b, null
  br i1 %none, label %free, label %keep
keep:
  store i64 %c, ptr %b
  %r = cmpxchg ptr @__enzyme_cc_spare, ptr null, ptr %b acq_rel monotonic
  %kept = extractvalue { ptr, i1 } %r, 1
  br i1 %kept, label %done, label %free
free:
  call void @free(ptr %b)
  br label %done
done:
  ret void
}

define internal void @__enzyme_cc_grow(ptr %t, i64 %need) noinline cold nounwind {
entry:
  %capp = getelementptr inbounds i8, ptr %t, i64 16
  %cap = load i64, ptr %capp
  %dbl = shl i64 %cap, 1
  %a = call i64 @llvm.umax.i64(i64 %dbl, i64 %need)
  %c = call i64 @llvm.umax.i64(i64 %a, i64 4096)
  %base = load ptr, ptr %t
  %nb = call ptr @realloc(ptr %base, i64 %c)
  %bad = icmp eq ptr %nb, null
  br i1 %bad, label %oom, label %ok
oom:
  call void @__enzyme_cc_tape_oom()
  unreachable
ok:
  store ptr %nb, ptr %t
  store i64 %c, ptr %capp
  ret void
}

; Frees postponed to the end of the gradient (the reverse sweep still reads those blocks: a
; realloc's old block, memory freed that is not one allocation of the function): a list of
; {next, primal, shadow, deallocator} nodes headed at byte 24 of the tape header, so callees
; reach it through the tape they share; tape_end frees them.
define internal void @__enzyme_cc_defer_free(ptr %t, ptr %p, ptr %s, ptr %fn) nounwind {
entry:
  %head = getelementptr inbounds i8, ptr %t, i64 24
  %n = call ptr @malloc(i64 32)
  %old = load ptr, ptr %head
  store ptr %old, ptr %n
  %np = getelementptr inbounds i8, ptr %n, i64 8
  store ptr %p, ptr %np
  %ns = getelementptr inbounds i8, ptr %n, i64 16
  store ptr %s, ptr %ns
  %nf = getelementptr inbounds i8, ptr %n, i64 24
  store ptr %fn, ptr %nf
  store ptr %n, ptr %head
  ret void
}

define internal void @__enzyme_cc_free_deferred(ptr %head) nounwind {
entry:
  %first = load ptr, ptr %head
  store ptr null, ptr %head
  br label %loop
loop:
  %n = phi ptr [ %first, %entry ], [ %next, %body ]
  %done = icmp eq ptr %n, null
  br i1 %done, label %exit, label %body
body:
  %next = load ptr, ptr %n
  %np = getelementptr inbounds i8, ptr %n, i64 8
  %p = load ptr, ptr %np
  %ns = getelementptr inbounds i8, ptr %n, i64 16
  %s = load ptr, ptr %ns
  %nf = getelementptr inbounds i8, ptr %n, i64 24
  %fn = load ptr, ptr %nf
  call void %fn(ptr %p)
  call void %fn(ptr %s)
  call void @free(ptr %n)
  br label %loop
exit:
  ret void
}
""" + oom_ir("tape")

# The shadow tape of a reverse-mode outer derivative: the outer reverse sweep uses the shadow of
# every push and pop long after it was made, so its bytes must never move (no realloc). A list of
# calloc'd chunks {prev, prev_top, prev_cap, next, cap, pad} + data; a chunk popped empty stays
# in the list for the next pushes (same LIFO order, so a reused slot's adjoint is already
# consumed), all of them freed by stape_free when the outer reverse sweep is done with the tape.
STABLE_TAPE = """

define internal void @__enzyme_cc_stape_init(ptr %t) nounwind {
entry:
  store ptr null, ptr %t
  %topp = getelementptr inbounds i8, ptr %t, i64 8
  store i64 0, ptr %topp
  %capp = getelementptr inbounds i8, ptr %t, i64 16
  store i64 0, ptr %capp
  ret void
}

define internal ptr @__enzyme_cc_stape_push(ptr %t, i64 %n) nounwind {
entry:
  %topp = getelementptr inbounds i8, ptr %t, i64 8
  %capp = getelementptr inbounds i8, ptr %t, i64 16
  %top = load i64, ptr %topp
  %cap = load i64, ptr %capp
  %new = add i64 %top, %n
  %ok = icmp ule i64 %new, %cap
  br i1 %ok, label %fast, label %slow
slow:
  %c = load ptr, ptr %t
  %hasc = icmp ne ptr %c, null
  br i1 %hasc, label %next, label %alloc
next:
  %nxp = getelementptr inbounds i8, ptr %c, i64 24
  %nx = load ptr, ptr %nxp
  %hasnx = icmp ne ptr %nx, null
  br i1 %hasnx, label %size, label %alloc
size:
  %nxcp = getelementptr inbounds i8, ptr %nx, i64 32
  %nxcap = load i64, ptr %nxcp
  %want = add i64 %n, 48
  %fits = icmp uge i64 %nxcap, %want
  br i1 %fits, label %enter, label %alloc
alloc:
  %after = phi ptr [ null, %slow ], [ null, %next ], [ %nx, %size ]
  %dbl = shl i64 %cap, 1
  %need = add i64 %n, 48
  %a = call i64 @llvm.umax.i64(i64 %dbl, i64 %need)
  %sz = call i64 @llvm.umax.i64(i64 %a, i64 4096)
  %m = call ptr @calloc(i64 1, i64 %sz)
  %bad = icmp eq ptr %m, null
  br i1 %bad, label %oom, label %link
oom:
  call void @__enzyme_cc_stape_oom()
  unreachable
link:
  %mnx = getelementptr inbounds i8, ptr %m, i64 24
  store ptr %after, ptr %mnx
  %mcp = getelementptr inbounds i8, ptr %m, i64 32
  store i64 %sz, ptr %mcp
  br i1 %hasc, label %linkc, label %enter
linkc:
  %cnx = getelementptr inbounds i8, ptr %c, i64 24
  store ptr %m, ptr %cnx
  br label %enter
enter:
  %ch = phi ptr [ %nx, %size ], [ %m, %link ], [ %m, %linkc ]
  store ptr %c, ptr %ch
  %pt = getelementptr inbounds i8, ptr %ch, i64 8
  store i64 %top, ptr %pt
  %pc = getelementptr inbounds i8, ptr %ch, i64 16
  store i64 %cap, ptr %pc
  %chcp = getelementptr inbounds i8, ptr %ch, i64 32
  %chcap = load i64, ptr %chcp
  store ptr %ch, ptr %t
  store i64 %chcap, ptr %capp
  %new2 = add i64 %n, 48
  br label %fast
fast:
  %at = phi i64 [ %top, %entry ], [ 48, %enter ]
  %end = phi i64 [ %new, %entry ], [ %new2, %enter ]
  store i64 %end, ptr %topp
  %base = load ptr, ptr %t
  %p = getelementptr inbounds i8, ptr %base, i64 %at
  ret ptr %p
}

define internal ptr @__enzyme_cc_stape_pop(ptr %t, i64 %n) nounwind {
entry:
  %topp = getelementptr inbounds i8, ptr %t, i64 8
  %capp = getelementptr inbounds i8, ptr %t, i64 16
  %top = load i64, ptr %topp
  %empty = icmp eq i64 %top, 48
  %some = icmp ne i64 %n, 0
  %back = and i1 %empty, %some
  br i1 %back, label %prev, label %here
prev:
  %c = load ptr, ptr %t
  %pv = load ptr, ptr %c
  %pt = getelementptr inbounds i8, ptr %c, i64 8
  %ptop = load i64, ptr %pt
  %pc = getelementptr inbounds i8, ptr %c, i64 16
  %pcap = load i64, ptr %pc
  store ptr %pv, ptr %t
  store i64 %pcap, ptr %capp
  br label %here
here:
  %cur = phi i64 [ %top, %entry ], [ %ptop, %prev ]
  %new = sub i64 %cur, %n
  store i64 %new, ptr %topp
  %base = load ptr, ptr %t
  %p = getelementptr inbounds i8, ptr %base, i64 %new
  ret ptr %p
}

define internal void @__enzyme_cc_stape_free(ptr %t) nounwind {
entry:
  %c = load ptr, ptr %t
  br label %first
first:
  %f = phi ptr [ %c, %entry ], [ %pv, %up ]
  %none = icmp eq ptr %f, null
  br i1 %none, label %done, label %up0
up0:
  %pv = load ptr, ptr %f
  %top = icmp eq ptr %pv, null
  br i1 %top, label %walk, label %up
up:
  br label %first
walk:
  %w = phi ptr [ %f, %up0 ], [ %nx, %walk ]
  %nxp = getelementptr inbounds i8, ptr %w, i64 24
  %nx = load ptr, ptr %nxp
  call void @free(ptr %w)
  %more = icmp ne ptr %nx, null
  br i1 %more, label %walk, label %done
done:
  call void @__enzyme_cc_stape_init(ptr %t)
  ret void
}
""" + oom_ir("stape")

def tape_ir(stats: bool) -> str:
    """The tape runtime; with `stats` (ENZYME_CC_TAPE_STATS=1 when the derivative is built) every
    push also counts its bytes and the peak height, printed on stderr by tape_end (a measuring
    aid for docs/performance.md, off by default: it costs two loads and stores per push)."""
    if not stats:
        return TAPE
    push_old = """  store i64 %new, ptr %topp
  %p = getelementptr inbounds i8, ptr %base, i64 %top
  ret ptr %p"""
    push_new = """  store i64 %new, ptr %topp
  %st.b = load i64, ptr @__enzyme_cc_stat_bytes
  %st.b1 = add i64 %st.b, %n
  store i64 %st.b1, ptr @__enzyme_cc_stat_bytes
  %st.n = load i64, ptr @__enzyme_cc_stat_pushes
  %st.n1 = add i64 %st.n, 1
  store i64 %st.n1, ptr @__enzyme_cc_stat_pushes
  %st.pk = load i64, ptr @__enzyme_cc_stat_peak
  %st.pk1 = call i64 @llvm.umax.i64(i64 %st.pk, i64 %new)
  store i64 %st.pk1, ptr @__enzyme_cc_stat_peak
  %p = getelementptr inbounds i8, ptr %base, i64 %top
  ret ptr %p"""
    end_old = """  call void @__enzyme_cc_free_deferred(ptr %listp)
"""
    end_new = """  call void @__enzyme_cc_free_deferred(ptr %listp)
  %st.b = load i64, ptr @__enzyme_cc_stat_bytes
  %st.n = load i64, ptr @__enzyme_cc_stat_pushes
  %st.pk = load i64, ptr @__enzyme_cc_stat_peak
  call i32 (i32, ptr, ...) @dprintf(i32 2, ptr @__enzyme_cc_stat_fmt, i64 %st.b, i64 %st.n, i64 %st.pk)
  store i64 0, ptr @__enzyme_cc_stat_bytes
  store i64 0, ptr @__enzyme_cc_stat_pushes
  store i64 0, ptr @__enzyme_cc_stat_peak
"""
    t = TAPE.replace(push_old, push_new).replace(end_old, end_new)
    fmt = "enzyme-cc: tape: %lu bytes in %lu pushes, peak %lu bytes\\0A\\00"   # 2 escapes of 3 characters
    return t + f"""
@__enzyme_cc_stat_bytes = internal global i64 0, align 8
@__enzyme_cc_stat_pushes = internal global i64 0, align 8
@__enzyme_cc_stat_peak = internal global i64 0, align 8
@__enzyme_cc_stat_fmt = private unnamed_addr constant [{len(fmt) - 2 * 2} x i8] c"{fmt}"
"""


def tape_stats() -> bool:
    return os.environ.get("ENZYME_CC_TAPE_STATS", "") not in ("", "0")


# calls of the tape helpers, which derivatives of generated code handle without differentiating
# them (rules/tape.py)
TAPE_OPS = {"@__enzyme_cc_push": "push", "@__enzyme_cc_pop": "pop",
            "@__enzyme_cc_push_nc": "push", "@__enzyme_cc_reserve": "reserve",
            "@__enzyme_cc_reserve_check": "rcheck",
            "@__enzyme_cc_tape_start": "start", "@__enzyme_cc_tape_end": "end",
            "@__enzyme_cc_tape_top": "top", "@__enzyme_cc_tape_settop": "settop",
            "@__enzyme_cc_stape_push": "spush", "@__enzyme_cc_stape_pop": "spop",
            "@__enzyme_cc_stape_init": "sinit", "@__enzyme_cc_stape_free": "sfree"}
