"""The floats a function accesses in a copy's memory outrank the copy's other evidence (copy_types.py):
one buffer may be laid out two ways on two paths (a message buffer one branch packs with
records `{int, int, double...}` and another with doubles), and the records' layout taken for
the doubles' copy loses the adjoints at the records' integer bytes. An integer's shadow is
zero, so moving it as a float is harmless; a float over a pointer, another float or across
two ranges is a clash no single copy can honour."""
from __future__ import annotations

from math import gcd

from ..structure.type_layout import decompose
from .copy_records import WIDTH, RecordRanges, joined


def floats_in(module, fn, inst, info, ranges):
    """The floats the function (TypeInfo info) accesses in the bytes a copy moves, from either
    end, as offsets from the copy's start: ([(offset, kind)] at constant offsets, [(c, g, kind)]
    at c + k*g for run-time indices). For a run of records of a variable count (RecordRanges)
    anything past the end's start, as offsets into a record: all at constant offsets."""
    stride = getattr(ranges, "stride", None)
    if stride is None and any(size is None for _, size, _ in ranges):
        return [], []
    length = max(off + size for off, size, _ in ranges) if stride is None else None
    consts, strided = {}, set()
    for p in (o.value for o in inst.ops[:2]):
        base, off = decompose(module, fn, p)
        if off is None:
            continue
        for o, k in info.float_accesses.get(base, {}).items():
            if off <= o and (length is None or o < off + length):
                consts.setdefault(o - off if stride is None else (o - off) % stride, k)
        for c, g, k in info.strided_floats.get(base, ()):
            if stride is None:
                strided.add(((c - off) % g, g, k))
            else:
                step = gcd(g, stride)
                for x in range((c - off) % step, stride, step):
                    consts.setdefault(x, k)
    return sorted(consts.items()), sorted(strided)


def overlaid(ranges: list, floats):
    """(the ranges with each float of `floats` (floats_in) laid over the integer range
    holding it, None) or (None, (offset, kind, the ranges it clashes with))."""
    consts, strided = floats
    if not consts and not strided:
        return ranges, None
    out = []
    for r in joined(ranges):
        pieces = _overlaid_range(r, consts, strided)
        if isinstance(pieces, tuple):
            return None, (pieces[0], pieces[1], [r])
        out += pieces
    out = joined(out)
    if isinstance(ranges, RecordRanges):
        # (records all of one float: that float over any length, a partial record too)
        out = [(0, None, out[0][2])] if len(out) == 1 and out[0][:2] == (0, ranges.stride) \
            else RecordRanges(out, ranges.stride)
    return out, None


def _overlaid_range(r, consts, strided):
    """The pieces of one range (ro, rs, kind) with the floats laid over it: [ranges], or
    (offset, kind) of a float that clashes with it."""
    ro, rs, rk = r
    hits = [(c, g, k) for c, g, k in strided if _first(c, g, ro) < ro + rs]
    at = [(o, k) for o, k in consts if ro <= o < ro + rs]
    if len(hits) == 1 and hits[0][1] == WIDTH[hits[0][2]] and rk in ("int", hits[0][2]) and \
            (ro - hits[0][0]) % hits[0][1] == 0 and rs % hits[0][1] == 0 and \
            all((o - ro) % hits[0][1] == 0 and k == hits[0][2] for o, k in at):
        return [(ro, rs, hits[0][2])]       # every element of the range one float (an array)
    pos = sorted({*at, *((o, k) for c, g, k in hits
                         for o in range(_first(c, g, ro), ro + rs, g))})
    if rk != "int":
        for o, k in pos:
            if k != rk or (o - ro) % WIDTH[k] or o + WIDTH[k] > ro + rs:
                return o, k
        return [r]
    pieces, end = [], ro
    for o, k in pos:
        if o < end or o + WIDTH[k] > ro + rs:
            return o, k                     # (overlapping floats, or one across the range)
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

