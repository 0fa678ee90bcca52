"""Record layouts of untyped copies (copy_types.py): the ranges of one record of a struct type,
repeated over a copy's length, and the one layout several copies of the same memory agree on."""
from __future__ import annotations

from enzyme_cc.ir.lexer import type_size
from ..structure.type_layout import (containing_type, decompose, layout, named_expand,
                                     opaque_layout, underlying)
from .debug_types import uniform_kind

# the bytes a value of each kind takes: a range cut inside one cuts the value
WIDTH = {"double": 8, "ptr": 8, "float": 4}


def element_ranges(size, lay, length):
    """The ranges of a copy of `length` bytes (None: a variable number) of values of one type
    (`size` bytes, `lay` its {offset: kind}): one kind over the whole copy where the type has
    one, else its fields repeated; None where the copy is not a whole number of values."""
    kind = uniform_kind(size, lay)
    if kind is not None:
        return [(0, length, kind)]
    if 0 not in lay:
        lay = {0: "int", **lay}
    offs = sorted(lay) + [size]
    rec = RecordRanges([(o, offs[i + 1] - o, lay[o]) for i, o in enumerate(offs[:-1])], size)
    if length is None:
        return rec
    return tiled_to(rec, length) if length % size == 0 else None


class RecordRanges(list):
    """The ranges of one record of a copy of a variable number of records `stride` bytes
    apart (e.g. std::sort's memmove of a run of structs)."""
    def __init__(self, ranges, stride):
        super().__init__(ranges)
        self.stride = stride


def record_ranges(module, fn, ptrs, info):
    """A copy of unknown length between arrays of one struct type (the declared type, or the
    one struct type GEPs index the memory by, at both ends it can be found for, starting on a
    record): the ranges of one record, or None."""
    named = module.named_types
    found = set()
    for p in ptrs:
        ty, off = containing_type(module, fn, p)
        if ty is None:
            base, off = decompose(module, fn, p)
            tys = info.records.get(info._find(base), set())
            if len(tys) > 1:
                return None
            ty = next(iter(tys), None)
        if ty is None or off is None:
            continue
        ty = ty.strip()
        while True:                              # arrays of records: the record
            body = named.get(ty, ty).strip()
            if not (body.startswith("[") and " x " in body):
                break
            ty = body[1:-1].split(" x ", 1)[1].strip()
        size = type_size(ty, named)
        if not size or off % size or opaque_layout(ty, named):
            return None                          # not on a record boundary, or bytes/unions
        found.add((ty, size))
    if len({size for _, size in found}) != 1 or len({named_expand(t, named) for t, _ in found}) != 1:
        return None
    ty, size = found.pop()
    lay = layout(ty, named)
    if 0 not in lay:
        lay[0] = "int"
    offs = sorted(lay) + [size]
    return RecordRanges([(o, offs[i + 1] - o, lay[o]) for i, o in enumerate(offs[:-1])], size)


def realloc_family(fn, info, ptrs) -> set:
    """The underlying objects of ptrs and the blocks realloc moves them to or from."""
    family = {info._find(underlying(fn, p)) for p in ptrs}
    moves = [(info._find(underlying(fn, c.name)), info._find(underlying(fn, c.ops[0].value)))
             for c in fn.insts() if c.op == "call" and c.callee == "@realloc" and c.name]
    grew = True
    while grew:
        grew = False
        for a, b in moves:
            if (a in family) != (b in family):
                family |= {a, b}
                grew = True
    return family


def tiled_to(rec, length):
    """A record layout repeated over `length` bytes (the last record possibly a part of one,
    cut after a field), or None when the cut splits a float or a pointer."""
    out = []
    for r in range(0, length, rec.stride):
        for off, size, kind in rec:
            a, b = r + off, min(r + off + size, length)
            if a >= length:
                break
            if b < a + size and kind in WIDTH:
                return None
            out.append((a, b - a, kind))
    return joined(out)


def _clipped(ranges, lo, size):
    """The ranges over [lo, lo + size), from offset 0, and size."""
    out = []
    for off, n, kind in ranges:
        a, b = max(off, lo), min(off + n, lo + size)
        if a < b:
            out.append((a - lo, b - a, kind))
    return out, size


def _agreed(samples, stride):
    """The one layout of a record that several copies draw ((ranges, bytes) of each record a
    copy moves, the last one of a shortened copy a part of one), or None where they disagree.
    Integer ranges and padding carry nothing, and copies draw them differently: a declared
    layout extends a field over the padding after it, `!tbaa.struct` leaves the padding out,
    touching fields of one kind may be one range. So the float and pointer ranges must start
    at the same offsets with the same kinds, no copy may call integer what another calls
    data, and where one range runs longer than another's (over padding), the shorter is
    taken."""
    whole = [joined([r for r in rs if r[2] != "int"]) for rs, size in samples if size == stride]
    if not whole:
        return None
    starts = [(off, kind) for off, _, kind in whole[0]]
    if any([(off, kind) for off, _, kind in d] != starts for d in whole[1:]):
        return None
    layout = [(off, min(n for d in whole for o, n, _ in d if o == off), kind)
              for off, kind in starts]
    for rs, size in samples:
        if size < stride and [(o, k) for o, _, k in joined([r for r in rs if r[2] != "int"])] \
                != [(o, k) for o, _, k in layout if o < size]:
            return None                      # a part of a record: the first fields of one
    claimed = [(off, n) for rs, _ in samples for off, n, kind in rs if kind != "int"]
    if any(kind == "int" and o < off + n and off < o + m
           for rs, _ in samples for o, m, kind in rs for off, n in claimed):
        return None
    return layout


def joined(ranges):
    """Ranges of one kind that touch, as one."""
    out = []
    for off, size, kind in ranges:
        if out and out[-1][2] == kind and out[-1][0] + out[-1][1] == off:
            out[-1] = (out[-1][0], out[-1][1] + size, kind)
        else:
            out.append((off, size, kind))
    return out


def agreed_records(copies, shortened):
    """The record layout the fixed-size copies into or out of one family of blocks agree on
    ((bytes, ranges) of each copy; `shortened`: the indices of copies whose struct tag runs
    past their length), as RecordRanges when it holds float data, None when it holds none,
    or, where the copies disagree, the set of kinds they hold."""
    # (a copy of records whose tail is overwritten next may have been shortened, by LLVM's
    # dead store elimination, its struct's tag kept: its last record is a part of one)
    stride = min((length for k, (length, _) in enumerate(copies) if k not in shortened),
                 default=None)
    layout = stride and _agreed([_clipped(rs, r, min(stride, length - r))
                                 for length, rs in copies for r in range(0, length, stride)],
                                stride)
    if layout is None:
        return {k for _, rs in copies for _, _, k in rs}
    return RecordRanges(layout, stride) if any(
        k in ("double", "float") for _, _, k in layout) else None
