"""The floats a function accesses in a copy's memory outrank the copy's other evidence (copy_types.py):
one buffer may be laid out two ways on two paths (a message buffer one branch packs with
records `{int, int, double...}` and another with doubles), and the records' layout taken for
the doubles' copy loses the adjoints at the records' integer bytes. An integer's shadow is
zero, so moving it as a float is harmless; a float over a pointer, another float or across
two ranges is a clash no single copy can honour."""
from __future__ import annotations

from math import gcd

from ..structure.type_layout import containing_type, decompose, opaque_layout
from .copy_records import WIDTH, RecordRanges, joined


def floats_in(module, fn, inst, info, ranges):
    """The floats the function (TypeInfo info) accesses in the bytes a copy moves, from either
    end, as offsets from the copy's start: ([(offset, kind)] at constant offsets, [(c, g, kind)]
    at c + k*g for run-time indices, (constant offsets, [(c, g)]) of its pointer accesses). For
    a run of records of a variable count (RecordRanges), anything past the end's start, as
    offsets into a record. Run-time indices count only in memory of no declared type (a heap
    block, a byte array): a local struct's `s.v[j]` would say "any 8 bytes" of all of it."""
    stride = getattr(ranges, "stride", None)
    if not ranges or stride is None and any(size is None for _, size, _ in ranges):
        return [], [], (set(), [])
    length = max(off + size for off, size, _ in ranges) if stride is None else None
    consts, strided, pointers, lattice = {}, set(), set(), []

    def at(o, off):
        return o - off if stride is None else (o - off) % stride

    for p in (o.value for o in inst.ops[:2]):
        base, off = decompose(module, fn, p)
        if off is None:
            continue
        for o, k in info.float_accesses.get(base, {}).items():
            if off <= o and (length is None or o < off + length):
                consts.setdefault(at(o, off), k)
        pointers |= {at(o, off) for o in info.pointer_accesses.get(base, ())
                     if off <= o and (length is None or o < off + length)}
        lattice += [((c - off) % g, g) for c, g, _ in info.strided_pointers.get(base, ())]
        ty, _ = containing_type(module, fn, base)
        if ty and not opaque_layout(ty, module.named_types):
            continue
        for c, g, k in info.strided_floats.get(base, ()):
            if stride is None:
                strided.add(((c - off) % g, g, k))
            else:
                step = gcd(g, stride)
                strided.update((x, stride, k) for x in range((c - off) % step, stride, step))
    return sorted(consts.items()), sorted(strided), (pointers, lattice)


def overlaid(ranges: list, floats):
    """(the ranges with the floats of `floats` (floats_in) laid over the integer ranges holding
    them, None) or (None, (offset, kind, the ranges it clashes with)) where a float at a
    constant offset lies over a pointer, another float, or across ranges. A float at a run-time
    index only says what its congruence allows: it is laid over whole integer ranges only, and
    clashes only with a pointer the function accesses at that very byte (one buffer holding
    records with pointers on one path, doubles on another)."""
    consts, strided, pointers = floats
    if not consts and not strided:
        return ranges, None
    out = []
    for r in joined(ranges):
        pieces = _overlaid_range(r, consts, strided, pointers)
        if isinstance(pieces, tuple):
            return None, (pieces[0], pieces[1], [r])
        out += pieces
    out = joined(out)
    if isinstance(ranges, RecordRanges):
        # (records all of one float: that float over any length, a partial record too)
        out = [(0, None, out[0][2])] if len(out) == 1 and out[0][:2] == (0, ranges.stride) \
            else RecordRanges(out, ranges.stride)
    return out, None


def _overlaid_range(r, consts, strided, pointers):
    """The pieces of one range (ro, rs, kind) with the floats laid over it: [ranges], or
    (offset, kind) of a float that clashes with it."""
    ro, rs, rk = r
    at = [(o, k) for o, k in consts if ro <= o < ro + rs]
    hits = [(c, g, k) for c, g, k in strided if _first(c, g, ro) < ro + rs]
    if rk != "int":
        for o, k in at:
            if k != rk or (o - ro) % WIDTH[k] or o + WIDTH[k] > ro + rs:
                return o, k
        ptr_at, lattice = pointers
        for c, g, k in hits if rk == "ptr" else ():
            for o in range(_first(c, g, ro), ro + rs, g):
                if o in ptr_at or any((o - pc) % pg == 0 for pc, pg in lattice):
                    return o, k
        return [r]
    if not at and len(hits) == 1 and hits[0][1] == WIDTH[hits[0][2]] and \
            (ro - hits[0][0]) % hits[0][1] == 0 and rs % hits[0][1] == 0:
        return [(ro, rs, hits[0][2])]       # every element of the range one float (an array)
    for o, k in at:
        if o + WIDTH[k] > ro + rs:
            return o, k                     # (across the range's end)
    taken = sorted(at)
    for a, b in zip(taken, taken[1:]):
        if b[0] < a[0] + WIDTH[a[1]]:
            return b                        # (two floats over each other)
    loose = sorted({(o, k) for c, g, k in hits for o in range(_first(c, g, ro), ro + rs, g)
                    if o + WIDTH[k] <= ro + rs})
    extra, i, last = [], 0, ro              # (where they fit beside the constant ones)
    for o, k in loose:
        while i < len(taken) and taken[i][0] + WIDTH[taken[i][1]] <= o:
            i += 1
        if o >= last and not (i < len(taken) and taken[i][0] < o + WIDTH[k]):
            extra.append((o, k))
            last = o + WIDTH[k]
    taken = sorted(taken + extra)
    pieces, end = [], ro
    for o, k in taken:
        if o > end:
            pieces.append((end, o - end, "int"))
        pieces.append((o, WIDTH[k], k))
        end = o + WIDTH[k]
    if end < ro + rs:
        pieces.append((end, ro + rs - end, "int"))
    return pieces


def _first(c, g, lo):
    """The least offset at or after lo that is c modulo g."""
    return lo + (c - lo) % g


def pointer_clash(module, fn, inst, info):
    """(offset, kind, [(offset, 8, 'ptr')]) where the function accesses a float and a pointer
    at one byte of a copy of a constant length's memory, else None."""
    try:
        length = int(inst.ops[2].value)
    except ValueError:
        return None
    for p in (o.value for o in inst.ops[:2]):
        base, off = decompose(module, fn, p)
        if off is None:
            continue
        floats = info.float_accesses.get(base, {})
        for o in sorted(info.pointer_accesses.get(base, ())):
            if off <= o < off + length and o in floats:
                return o - off, floats[o], [(o - off, 8, "ptr")]
    return None


def clash_words(clash) -> str:
    """The error's words for a clash overlaid() found."""
    o, k, at = clash
    words = {"ptr": "a pointer", "int": "integers", None: "unknown data"}
    what = " and ".join(f"{words.get(rk, 'a ' + str(rk))} at byte {ro}" for ro, _, rk in at)
    return (f"the function accesses a {k} at byte {o} of the copied memory, where the copy's "
            f"type has {what}: one buffer laid out two ways")

