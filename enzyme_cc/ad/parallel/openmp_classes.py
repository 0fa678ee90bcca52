"""Which memory the threads of an OpenMP team share, and the address classes a team's derivative
tracks its loads in (ad/parallel/openmp_ranges.py): one per array a region gathers from, the outlined
region's own numbered apart from the functions it calls; and the forward sweep's calls that record
a load's address in its class's two ranges."""
from __future__ import annotations

from enzyme_cc.ir.lexer import type_size
from ..structure.type_layout import underlying

K = 20                    # address classes per thread: one per array a region gathers from
                          # (LULESH's node arrays: x, y, z, xd, yd, zd, ... were 4 classes,
                          # whose ranges then spanned several arrays and left no exclusive part)
ROOT = 16                 # classes 0..ROOT-1: the outlined region's own loads; ROOT..K-1 are
                          # shared by the functions it calls (see load_class)
R = 2 * K                 # ranges per thread: two per class, the second of class k at k + K
                          # (a thread's loads of a periodic neighbour list or of halo cells
                          # kept at the array's end form two runs, whose hull is the array)


def pair(k: int) -> str:
    """The locals of class k's two ranges (the second at k + K), as arguments."""
    return (f"ptr %ad.tlo.{k}, ptr %ad.thi.{k}, ptr %ad.tlo.{k + K}, ptr %ad.thi.{k + K}")


def track(k: int, ptr: str, size: int, wide: bool) -> str:
    """The forward sweep's call recording the `size` bytes at shadow address ptr in class k:
    into its two ranges where wide (openmp_affine.gathers), else into its first (a min and a
    max)."""
    if not wide:
        return f"call void @__enzyme_cc_omp_track1(ptr %ad.tlo.{k}, ptr %ad.thi.{k}, ptr {ptr}, i64 {size})"
    return f"call void @__enzyme_cc_omp_track({pair(k)}, ptr {ptr}, i64 {size})"


def track_span(k: int, lo: str, end: str) -> str:
    """... recording the bytes [lo, end) (integers) in class k's two ranges as one span (a
    loop's loads between its first and last iteration: a loop entered once per neighbour box
    may start anywhere in the array). Where a loop is entered, not in its body: the rare case
    of the merge out of line (openmp_range_runtime's track_span_x)."""
    return f"call void @__enzyme_cc_omp_track_span_x({pair(k)}, i64 {lo}, i64 {end})"


def shared(ctx, ptr: str) -> bool:
    """In a derivative run by a team: is ptr's memory possibly shared with other threads?"""
    return shared_in(ctx.synth, ptr)


def shared_in(synth, ptr: str) -> bool:
    """shared, in synth's function: not when ptr points into one of its allocas or into what a
    private parameter points at (private_args)."""
    if not getattr(synth, "parallel", False):
        return False
    base = underlying(synth.fn, ptr)
    d = synth.fn.defs.get(base)
    return getattr(d, "op", None) != "alloca" and base not in getattr(synth, "private", ())


def load_class(synth, ptr) -> int:
    """The address class of a load through ptr (the same in both sweeps of one function): its
    underlying object, and the part of its index fixed in its loops (`x[n + i]` and `x[2 * n + i]`,
    the components of a node array kept in one block, are two classes). One object may span
    several classes: a thread's exclusive range of a class excludes the ranges of every class
    of the other threads (__enzyme_cc_omp_excl_begin).
    A thread's ranges are per class number, whichever function of the region tracked them, so
    a called function must not share numbers with the region's own function: its pointer
    parameters may point at the caller's thread-private arrays (LULESH-style hex_volume(px, ...)
    on an element's gathered corners), and one range spanning those and a shared node array
    left no exclusive part of the node array, every add atomic. The outlined function numbers
    its classes in 0..ROOT-1, every function it calls in ROOT..K-1 (numbered across the whole
    program, so that two callees share a number only once ROOT..K-1 is used up)."""
    base, offset = _constant_tail(synth, ptr)
    return class_of(synth, (underlying(synth.fn, ptr), _fixed_addend(synth, base), offset))


def class_of(synth, key) -> int:
    """The class number of key in synth's function (see load_class)."""
    classes = synth.__dict__.setdefault("_omp_classes", {})
    if key not in classes:
        gen = synth.gen
        if synth.fn.name in gen.__dict__.get("_omp_roots", ()):
            classes[key] = len(classes) % ROOT
        else:
            n = gen.__dict__.get("_omp_callee_classes", 0)
            gen._omp_callee_classes = n + 1
            classes[key] = ROOT + n % (K - ROOT)
    return classes[key]


def mark_root(gen, name):
    """name is an outlined region's function: its classes are 0..ROOT-1 (load_class)."""
    gen.__dict__.setdefault("_omp_roots", set()).add(name)


SPLIT_OFFSET = 1024        # a constant offset this large is another component, not a field


def _constant_tail(synth, ptr):
    """(the pointer before ptr's trailing constant offsets, their sum in bytes when it is at
    least SPLIT_OFFSET): at -O2 `x[60 + nd]` over doubles is `gep i8, (gep double, %x, %nd),
    480`. A large offset is a component array kept in the same block as the others (the node
    coordinates y after the x ones), which gets a class of its own; a small one is a field of an
    element's record, which shares its record's class (their ranges interleave anyway)."""
    fn, total = synth.fn, 0
    d = fn.defs.get(ptr)
    while getattr(d, "op", None) == "getelementptr" and len(d.ops) == 2 and \
            not d.ops[1].value.startswith("%") and d.src_ty is not None:
        try:
            total += int(d.ops[1].value) * type_size(d.src_ty, synth.module.named_types)
        except ValueError:
            break
        ptr = d.ops[0].value
        d = fn.defs.get(ptr)
    return ptr, (total if abs(total) >= SPLIT_OFFSET else 0)


def _fixed_addend(synth, ptr):
    """The operand of ptr's index sum that no loop around it changes, when the other operand
    does: `gep double, ptr %x, (sext (add %n, %i))` in a loop over i -> %n; a constant too
    when it moves SPLIT_OFFSET bytes or more (`x[200 + nd]` unoptimized: the second component
    of an array of 200 nodes; not `x[i + 1]`, a neighbour)."""
    fn = synth.fn
    d = fn.defs.get(ptr)
    if getattr(d, "op", None) != "getelementptr" or len(d.ops) < 2:
        return None
    idx = fn.defs.get(d.ops[-1].value)
    if getattr(idx, "op", None) in ("sext", "zext"):
        idx = fn.defs.get(idx.ops[0].value)
    around = [lp.blocks for lp in synth.loops.values() if d.block.label in lp.blocks]
    if getattr(idx, "op", None) != "add" or not around:
        return None
    fixed = [o.value for o in idx.ops if not o.value.startswith("%") or
             not hasattr(fn.defs.get(o.value), "op") or
             not any(fn.defs[o.value].block.label in blocks for blocks in around)]
    if len(fixed) != 1:
        return None
    if not fixed[0].startswith("%"):
        try:
            moved = abs(int(fixed[0])) * type_size(d.src_ty or "i8", synth.module.named_types)
        except ValueError:
            return None
        return fixed[0] if moved >= SPLIT_OFFSET else None
    return fixed[0]
