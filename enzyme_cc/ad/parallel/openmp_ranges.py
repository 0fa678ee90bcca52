"""OpenMP reverse mode: plain adjoint adds where no other thread of the team adds.

With 2+ threads an adjoint added into shared memory is atomic (a `lock cmpxchg` loop on x86),
which made the 2-thread gradient of a stencil slower than the 1-thread one. Most of those adds
cannot collide: in a row-parallel loop each thread's adjoints go to its own rows, except next to
another thread's block. So:

- the forward sweep of each thread records, per address class (the underlying object of the
  load, K classes per function), the range [lo, hi) of shadow addresses its loads' adjoints will
  be added into (`track_load`; locals kept in registers, merged into thread-local ranges at the
  function's returns and into the fork's record by the region's wrapper). Each class has two
  ranges: a thread's loads often form two runs whose hull is the whole array, its own block and
  the other end of a periodic neighbour list, or the halo cells kept at the end. A gathering
  load (openmp_affine.gathers) and a loop's span tracked at its entry go into both: next to one
  of them widens it; apart from both goes where it covers the fewest new bytes, joining the two
  if they lie closest (__enzyme_cc_omp_insert). Any other load widens the first (a min and a
  max: cheaper where a loop tracks many);
- the reverse wrapper gives each range of the thread the part that no range of any other
  thread touches (each fork's threads ran their forward sweeps to the end before the reverse
  fork);
- an add whose address lies inside one of the thread's exclusive ranges of its class is plain
  (`own_range`), any other stays atomic.

This is exact only if every add into shared memory by the region's reverse sweep is a load's
adjoint that its forward sweep tracked: `trackable` accepts a region (with its callees) made of
plain loads and stores, calls of such functions, OpenMP bookkeeping, intrinsics and external
functions without pointer arguments, memset (its reverse zeroes the shadow), calls without a
derivative (fprintf's report of an unexpected case), and anything in blocks that never return
(an error's report before `exit`: no reverse); any other region (atomics, memcpy, library calls
on memory, nested forks, indirect calls) and any region run inside another active team gets
empty ranges, so all its shared adds stay atomic.
Over-approximated ranges only keep more adds atomic.
All this is in the team version of a region's derivative only: a thread without a team of
several threads runs the serial version, with plain adds and no tracking (openmp._wrapper).
"""
from enzyme_cc.ir.lexer import type_size
from ..structure.cfg import doomed_blocks
from .openmp_classes import K, R, load_class, pair, track
from .openmp_affine import gathers, hoisted, iteration_classes, range_check
from . import openmp_index

def track_allocas():
    """Prologue of a team's augmented function: its ranges start empty, in locals (SROA)."""
    out = []
    for k in range(R):
        out += [f"%ad.tlo.{k} = alloca i64", f"%ad.thi.{k} = alloca i64",
                f"store i64 -1, ptr %ad.tlo.{k}", f"store i64 0, ptr %ad.thi.{k}"]
    return out


def load_classes(synth, inst) -> list[int]:
    """The classes whose ranges the forward sweep tracked load inst's shadow addresses in: one,
    or one per iteration of a short loop (openmp_affine.iteration_classes). An add into any
    exclusive range of the thread is safe plain, whichever class it was tracked in."""
    return iteration_classes(synth, inst) or [load_class(synth, inst.ops[0].value)]


def windows(synth, ks, n) -> list[tuple[str, str]]:
    """exclusive's (start, width) of both ranges of each class in ks."""
    return [exclusive(synth, j, n) for k in ks for j in (k, k + K)]


def exclusive(synth, k, n) -> tuple[str, str]:
    """(start, width) of the thread's exclusive range k (a class's first range, or its
    second at k + K) for an add of n bytes: an
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
        out += [f"{lo} = load i64, ptr getelementptr inbounds ([{R} x i64], ptr "
                f"@__enzyme_cc_omp_xlo, i64 0, i64 {k}), align 8",
                f"{hi} = load i64, ptr getelementptr inbounds ([{R} x i64], ptr "
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
        if range_check() and not openmp_index.check_covered(ctx, inst):
            ks = (load_classes(ctx.synth, inst) * 4)[:4]      # in any of them (per iteration)
            pairs = ", ".join(pair(c) for c in ks)
            ctx.emit(f"call void @__enzyme_cc_omp_range_assert({pairs}, ptr {ctx.s(ptr)}, "
                     f"i64 {size})")
        return
    if openmp_index.track(ctx, inst):     # by its index, its address at the loop's exits
        return
    ctx.emit(track(k, ctx.s(ptr), size, gathers(ctx.synth, inst)))


def track_merge(ctx):
    """At a return of a team's augmented function: its ranges into the thread's."""
    for k in range(K):
        ctx.emit(f"call void @__enzyme_cc_omp_track_merge({pair(k)}, i64 {k})")


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
    used = fn.users() if any(i.op == "atomicrmw" for i in fn.insts()) else {}
    doomed = doomed_blocks(fn)          # no return from them: no reverse (an error's report)
    return all(_tracked_in(gen, i, after, used, (seen, is_openmp, kind, fork))
               for b in fn.blocks if b.label not in doomed
               for i, after in zip(b.insts, b.insts[1:] + [b.term]))


def _tracked_in(gen, i, after, used, region) -> bool:
    """Instruction i (followed by `after`) of a region's function adds into shared memory, in
    the reverse sweep, only as the adjoint of a plain load (trackable). An atomic add of floats
    whose result nothing reads (a reduction clause's atomic update) adds nothing there: its
    adjoint reads the shadow; an integer counter has none. A call that does not return
    (`assert`'s failure) has no reverse."""
    seen, is_openmp, kind, fork = region
    if i.op in ("load", "store"):
        return not {"atomic", "volatile"} & set(i.toks)
    if i.op == "atomicrmw":
        if i.ops[1].ty.startswith("i"):
            return i.pred in ("add", "sub", "and", "or", "xor", "max", "min", "umax", "umin")
        return i.pred in ("fadd", "fsub") and not used.get(i.name)
    if i.op in ("cmpxchg", "invoke"):
        return False
    if i.op == "call":
        c = i.callee or ""
        if after.op == "unreachable":
            return True
        if not c.startswith("@") or c == fork:
            return False
        if is_openmp(c):
            return kind(c) == "omp"
        if gen.module.defines(c):
            return trackable(gen, c, seen, is_openmp, kind, fork)
        if gen.reverse_adds_nothing(c):     # memset, calls without a derivative (I/O)
            return True
        # memcpy, masked loads, library calls on memory, ...
        return not any(o.ty == "ptr" for o in i.ops) or c.startswith(_NO_MEMORY)
    return True
