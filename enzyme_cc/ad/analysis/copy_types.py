"""What an untyped copy moves (seeds/001 Figure 2): the byte ranges of a memcpy/memmove by kind,
so that its adjoint adds doubles as doubles, floats as floats and leaves pointers and integers
alone. Evidence, strongest first: `!tbaa.struct`, a run of records of one struct type, character
data, the declared struct (type_layout.py: the object's, a typed GEP's, the records', or the other
end of a copy of as many bytes), the kinds typed accesses show (typeinfo.py)."""
from __future__ import annotations

from enzyme_cc.ir.lexer import type_size
from ..structure.type_layout import (containing_type, decompose, element_slot, layout,
                                     opaque_layout, record_of, tbaa_struct, underlying,
                                     union_hides_range)
from ..structure.diagnostics import is_rust
from ..structure.fortran_descriptors import loaded_data_kind
from .copy_floats import clash_words, floats_in, overlaid, pointer_clash
from .copy_records import (WIDTH, RecordRanges, agreed_records, element_ranges, realloc_family,
                           record_ranges, tiled_to)
from .debug_types import copied_layout, declared_layouts
from .stored_layout import stored_layout
from .typeinfo import TypeInfo, callee_kinds


def access_types(module, fn, base: str) -> set:
    """Float/pointer kinds of all typed accesses to one underlying object (memcpy fallback)."""
    info = TypeInfo(module, fn)
    return (set(info.facts.get(base, {}).values()) - {"int"}) | info.uniform.get(info._find(base), set())


def copy_ranges(module, fn, inst, info: TypeInfo | None = None, evidence_only=False):
    """Byte ranges of a memcpy/memmove by kind (_copy_ranges), where the floats the function
    accesses in its memory are floats (copy_floats.py); None where they clash with them."""
    info = info or TypeInfo(module, fn)
    ranges = _copy_ranges(module, fn, inst, info, evidence_only)
    return overlaid(ranges, floats_in(module, fn, inst, info, ranges))[0] if ranges else ranges


def layout_conflict(module, fn, inst, info) -> str | None:
    """Words for the error where a float the function accesses in a copy's memory clashes with
    the copy's evidence (a pointer there: one buffer laid out two ways), else None."""
    ranges = _copy_ranges(module, fn, inst, info, False)
    clash = overlaid(ranges, floats_in(module, fn, inst, info, ranges))[1] if ranges else \
        pointer_clash(module, fn, inst, info)
    return clash_words(clash) if clash else None


def _copy_ranges(module, fn, inst, info: TypeInfo, evidence_only):
    """Byte ranges of a memcpy/memmove by kind: [(offset, size, kind)], or [(0, None, kind)]
    for a copy of unknown length with one element kind, or None when unknown. evidence_only:
    from the copy's own types alone (tags, declarations, typed accesses through its ends),
    not from the other copies of its memory nor the one kind accessed in it."""
    dst, src, n = inst.ops[:3]
    try:
        length = int(n.value)
    except ValueError:
        length = None
    ts = tbaa_struct(module, inst.md.get("!tbaa.struct"))
    if length is not None and ts:
        ranges = []
        for off, (size, kind) in sorted(ts.items()):
            if off < length:        # (a copy LLVM shortened keeps the struct's whole tag)
                size = min(size, length - off)
                ranges += [(off, size, kind)] if kind else \
                    _guessed(info, dst.value, src.value, off, size)
        if any(k is None for _, _, k in ranges):
            return _declared_ranges(module, fn, (dst.value, src.value), length, info) or \
                _struct_by_shape(module, ranges, length) or ranges
        return ranges
    elem = copied_layout(module, inst)
    if elem is not None:
        # a standard library routine moving values of its type parameter (debug_types.py)
        ranges = element_ranges(*elem, length)
        if ranges is not None:
            return ranges
    if length is not None and (is_rust(fn.name) or "@rust_eh_personality" in module.declarations):
        # rustc's memory has no types, its debug info has: a local's declared type
        ranges = _debug_declared(module, fn, (dst.value, src.value), length)
        if ranges is not None:
            return ranges
    if length is None:
        # a run of records: their declared struct type is stronger evidence than the kinds
        # accessed anywhere in the memory (a struct's double field alone says "double")
        rec = record_ranges(module, fn, (dst.value, src.value), info)
        if rec is not None:
            return rec
    if any(info.char_data(o, length) for o in (dst.value, src.value)):
        return [(0, length, "int")]          # characters (a string's): no derivative
    # a Fortran array's data, declared by its descriptor (a copy loop LLVM made a memcpy)
    declared_data = {loaded_data_kind(module, fn, o) for o in (dst.value, src.value)} - {None}
    if len(declared_data) == 1:
        return [(0, length, declared_data.pop())]
    if length is None and all(info.char_data(o, 1) for o in (dst.value, src.value)):
        # a copy of a run time length between two places `char *`s point to (std::string's
        # moved characters, in a record whose double field follows its small buffer)
        return [(0, None, "int")]
    # a struct's declared layout outranks the kinds this function happens to access in it (a
    # sort that only reads the int key of records holding doubles and pointers); a declared
    # type of integers alone does not (an SROA'd slot typed i64 may hold a double)
    declared = _declared_ranges(module, fn, (dst.value, src.value), length, info) \
        if length is not None else None
    if declared and (any(k != "int" for _, _, k in declared) or
                     dst.value.startswith("%ecc.byval.")):
        # (a by-value argument's copy, typed by the call's byval type: its integers are)
        return declared
    if length is not None and not declared:
        # `memcpy(b, &s[i], sizeof *b)` into malloc'd memory: the module's one struct layout of
        # that size that agrees with every typed access through either end
        shaped = _struct_by_shape(module, _accessed(info, (dst.value, src.value), length), length)
        if shaped:
            return shaped
    if evidence_only:
        return declared
    if length is not None:
        # the records the other copies into or out of this memory agree on (`b[0] = s[i]`
        # before `memcpy(&b[2], b, 2 * sizeof *b)`): they outrank the one kind accessed in it
        rec = block_records(module, fn, (dst.value, src.value), info)
        if isinstance(rec, RecordRanges):
            tiled = tiled_to(rec, length)
            if tiled:
                return tiled
    kinds = set()
    summaries = [info.pointee_summary(o) for o in (dst.value, src.value)]
    for s in summaries:
        # (only what lies within the copy: Eigen's hand-aligned block keeps the pointer malloc
        # returned just before its first element)
        kinds |= {k for off, k in s.items() if off == "*" or
                  0 <= off < (length if length is not None else off + 1)} - {"int"}
    if not kinds and not any(summaries):
        # nothing here says what it holds, not even integers: the memory it is copied on to
        # and the routines it is handed to (a C driver copying an array for LAPACK; Eigen's
        # `MatrixXd A = map; PartialPivLU lu(A)`, which copies A again into the solver's storage)
        kinds = _linked_kinds(module, fn, (dst.value, src.value), info)
    if kinds == {"ptr"} and length is not None and length > 8 and \
            not any(isinstance(off, int) and 0 <= off < length and k != "int"
                    for s in summaries for off, k in s.items()) \
            and any(decompose(module, fn, o)[1] not in (0, None) for o in (dst.value, src.value)):
        # the only evidence is pointers stored somewhere in the block (a node's links), and the
        # copy lies inside it past its start (std::map's _M_copy cloning a node's value, a
        # pair<const int, double>, beside its links): its bytes may hold floats
        return None
    if kinds == {"ptr"} and _variant_arm(module, fn, inst):
        # a copy in one arm of a test of its source's tag word (a Rust enum's clone), where the
        # only evidence is a pointer another variant keeps there (a recursive variant's Vec):
        # the other variants may keep floats in those bytes (their adjoints were lost)
        return None
    if len(kinds) == 1:
        return [(0, length, kinds.pop())]
    if length is not None:
        # the ends are accessed as different kinds (the caller's view of its slot is a union):
        # a local this function filled itself says what the copy moves out of it
        stored = stored_layout(module, fn, inst, length)
        if stored:
            return stored
    if not kinds:
        allint = all(set(s.values()) == {"int"} for s in summaries)
        if allint or any(info.int_pointee(o) for o in (dst.value, src.value)) or \
                all(info.int_class(o) for o in (dst.value, src.value)):
            # (nothing says float, and the program's type of an end says integers: the index
            # array of Eigen's sparse storage, grown by a copy into a fresh block; a
            # std::vector<int> beside a std::vector<double> in one struct, grown by push_back)
            return [(0, length, "int")]
    return declared


def _debug_declared(module, fn, ends, length):
    """The ranges of a copy of `length` bytes at a constant offset into a local whose
    `#dbg_declare` gives its type (debug_types.declared_layouts), or None."""
    declared = declared_layouts(module, fn)
    for p in ends:
        base, off = decompose(module, fn, p)
        if base not in declared or off is None:
            continue
        size, lay = declared[base]
        if off < 0 or off + length > size or \
                any(o < off < o + WIDTH.get(k, 0) for o, k in lay.items()):
            continue                            # (outside it, or starting inside a scalar)
        sub = {o - off: k for o, k in lay.items() if off <= o < off + length}
        if sub:
            return _merged(sub, length)
    return None


def _variant_arm(module, fn, inst) -> bool:
    """In Rust's code, the copy's block is reached only from a branch or switch on the integer
    word at the start of its source (an enum's tag, or the niche in its first field)."""
    if not is_rust(fn.name) and "@rust_eh_personality" not in module.declarations:
        return False
    src = underlying(fn, inst.ops[1].value)
    preds = getattr(inst, "block", None) and inst.block.preds
    return bool(preds) and all(p.term.op in ("br", "switch") and p.term.ops and
                               _loaded_from(module, fn, p.term.ops[0].value, src, 0)
                               for p in preds)


def _loaded_from(module, fn, v: str, src: str, depth: int) -> bool:
    """v is computed (compares, selects, casts, integer arithmetic) from an integer load of
    the first word of src's memory."""
    d = fn.defs.get(v)
    op = getattr(d, "op", None)
    if op == "load":
        return d.ty in ("i64", "i32", "i16", "i8") and \
            decompose(module, fn, d.ops[0].value) == (src, 0)
    if depth > 6 or op not in ("icmp", "select", "xor", "and", "or", "add", "sub", "trunc",
                               "zext", "sext"):
        return False
    return any(o.value.startswith("%") and _loaded_from(module, fn, o.value, src, depth + 1)
               for o in d.ops)


def _declared_ranges(module, fn, ptrs, length, info=None):
    """Last resort for a fixed-size copy nothing typed touches: the declared type of the object
    (stack object, global, or array element a typed GEP addresses) it copies from or to, from
    the copy's byte offset in it: padding before the first field carries no derivative. Byte
    arrays (SROA slices) say nothing, nor do unions whose IR type is not a float
    (opaque_layout)."""
    named = module.named_types
    ptrs, seen = list(ptrs), set()
    for p in ptrs:
        if p in seen:
            continue
        seen.add(p)
        ty, off = containing_type(module, fn, p)
        if not ty and info is not None:
            ty, off = record_of(module, fn, info, p)
        if not ty or off is None:
            # the other ends of this function's copies of as many bytes with p: `S t = *a;
            # *a = *b; *b = t;` copies *b's type from t's declaration (the pointers reloaded
            # from one spill slot, at -O0, are one pointer); a copy whose !tbaa.struct types
            # every field (`b[0] = s[0]` before `b[1] = b[0]`, in malloc'd memory) says it
            for q, copy in _copied_with(fn, p, length):
                tagged = _tagged_ranges(module, copy, length)
                if tagged:
                    return tagged
                ptrs.append(q)
            continue
        if opaque_layout(ty, named):
            if off == 0 and ty.startswith("[") and p in fn.defs:
                ptrs += [q for q, _ in _copied_with(fn, p, length)]   # an SROA slice: typed where it goes
            continue
        size = type_size(ty, named)
        if not size:
            continue
        off %= size                          # an element of an array of ty
        count = (off + length + size - 1) // size
        whole = f"[{count} x {ty}]" if count > 1 else ty
        if union_hides_range(whole, named, off, off + length):
            continue                         # a C++ union (std::function's) says nothing
        lay = layout(whole, named)
        if any(o < off < o + (4 if k == "float" else 8) for o, k in lay.items() if k != "int"):
            continue                         # starts inside a float or a pointer
        lay = {o - off: k for o, k in lay.items() if off <= o < off + length}
        if not lay:
            continue
        return _merged(lay, length)
    return None


def _copied_with(fn, buf, length):
    """(other end, the copy) of the fixed-size copies of `length` bytes into or out of buf."""
    out = []
    key = _spilled(fn, buf)
    for inst in fn.insts():
        if inst.op == "call" and (inst.callee or "").startswith(("@llvm.memcpy", "@llvm.memmove")) \
                and len(inst.ops) >= 3 and inst.ops[2].value == str(length):
            a, b = inst.ops[0].value, inst.ops[1].value
            if key in (_spilled(fn, a), _spilled(fn, b)):
                out.append((b if _spilled(fn, a) == key else a, inst))
    return out


def _struct_by_shape(module, ranges, length):
    """Fill the holes of a `!tbaa.struct` (clang tags an array member as char: `double v[2]`
    and `double *p[2]` alike) from the module's struct types of that size (or a few records of
    one) whose layout agrees with every tagged field: when they all say the same in the holes,
    that is the layout."""
    if not any(k is not None for _, _, k in ranges):
        return None                           # nothing to match a layout against
    fills = set()
    for lay in _layouts_of_size(module, length):
        if any(k is not None and not _agrees(lay, off, size, k) for off, size, k in ranges):
            continue
        fills.add(tuple((o, lay[o]) for off, size, k in ranges if k is None
                        for o in sorted(lay) if off <= o < off + size))
    if len(fills) != 1:
        return None
    fill = dict(next(iter(fills)))
    lay = {off: k for off, _, k in ranges if k is not None}
    whole = {**lay, **fill}
    for off, size, k in ranges:
        if k is None and off not in fill and \
                any(o < off < o + WIDTH.get(kind, 0) for o, kind in whole.items()):
            return None                       # a hole starting inside a field (else padding)
    lay.update(fill)
    return _merged(lay, length)


def _layouts_of_size(module, length):
    """The layouts of the module's struct types of `length` bytes, or of runs of up to 64
    records of one (unions and byte arrays left out), the last record possibly cut after a
    field (LLVM shortens a copy whose tail is overwritten next); computed once per module
    and length."""
    cache = module.__dict__.setdefault("_layouts_of_size", {})
    if length not in cache:
        named, lays = module.named_types, []
        for name in named:
            if "union." in name or named[name].strip() == "opaque":
                continue        # (an opaque type, declared but not defined: MPI's handles)
            tsize = type_size(name, named)
            count = -(-length // tsize) if tsize else 0
            if not tsize or count > 64 or opaque_layout(name, named):
                continue
            lay = layout(name if count == 1 else f"[{count} x {name}]", named)
            if length % tsize:
                if any(o < length < o + WIDTH.get(k, 0) for o, k in lay.items()):
                    continue                  # the cut splits a float or a pointer
                lay = {o: k for o, k in lay.items() if o < length}
            lays.append(lay)
        cache[length] = lays
    return cache[length]


def _accessed(info, ptrs, length):
    """Ranges for _struct_by_shape from the typed accesses through the copy's ends: each
    accessed scalar a known range, the rest of the bytes holes to fill."""
    seen = {}
    for p in ptrs:
        for off, kind in info.pointee_summary(p).items():
            if isinstance(off, int) and 0 <= off < length:
                seen.setdefault(off, kind)
    if not seen:
        return []
    ranges, pos = [], 0
    for off in sorted(seen):
        if off < pos:
            return []                           # overlapping accesses: no layout
        if off > pos:
            ranges.append((pos, off - pos, None))
        size = WIDTH.get(seen[off], 4)
        ranges.append((off, size, seen[off]))
        pos = off + size
    if pos < length:
        ranges.append((pos, length - pos, None))
    return ranges


def _agrees(lay: dict, off: int, size: int, kind: str) -> bool:
    """The layout has `kind` scalars over [off, off + size) (and only padding besides)."""
    inside = [k for o, k in lay.items() if off <= o < off + size]
    return bool(inside) and lay.get(off) == kind and all(k == kind for k in inside)


def _tagged_ranges(module, copy, length):
    """The ranges a copy's complete `!tbaa.struct` gives (every field's kind known), or None."""
    ts = tbaa_struct(module, copy.md.get("!tbaa.struct"))
    if not ts or any(k is None for _, k in ts.values()):
        return None
    lay = {off: kind for off, (_, kind) in ts.items()}
    return _merged(lay, length)


def _merged(lay: dict, length: int):
    """[(offset, size, kind)] from {offset: kind} over `length` bytes, adjacent scalars of one
    kind in one range, padding before the first field an integer range."""
    lay = dict(lay)
    if 0 not in lay:
        lay[0] = "int"
    offs = sorted(lay) + [length]
    ranges = []
    for i, o in enumerate(offs[:-1]):
        if ranges and ranges[-1][2] == lay[o]:
            ranges[-1] = (ranges[-1][0], offs[i + 1] - ranges[-1][0], lay[o])
        else:
            ranges.append((o, offs[i + 1] - o, lay[o]))
    return ranges


def _spilled(fn, v: str) -> str:
    """v, or for a pointer reloaded from a stack slot that only ever holds one value (a
    parameter's spill at -O0), that value. One pass over the function, kept on it."""
    spills = getattr(fn, "_spill_values", None)
    if spills is None:
        stored: dict = {}
        bad = set()
        for inst in fn.insts():
            for k, o in enumerate(inst.ops):
                if getattr(fn.defs.get(o.value), "op", None) != "alloca":
                    continue
                if inst.op == "store" and k == 1:
                    stored.setdefault(o.value, set()).add(inst.ops[0].value)
                elif not (inst.op == "load" or inst.op == "call" and (inst.callee or "").startswith(
                        ("@llvm.lifetime.", "@llvm.dbg."))):
                    bad.add(o.value)
            for w, _ in inst.incoming:
                bad.add(w)
        spills = {}
        for inst in fn.insts():
            if inst.op == "load" and inst.ty == "ptr":
                slot = inst.ops[0].value
                vals = stored.get(slot, ())
                if slot not in bad and len(vals) == 1:
                    spills[inst.name] = next(iter(vals))
        fn._spill_values = spills
    return spills.get(v, v)


_COPIES = ("@llvm.memcpy", "@llvm.memmove", "@memcpy", "@memmove")


def _linked_kinds(module, fn, ends, info) -> set:
    """The float or pointer kinds of the memory of `ends` and of the memory the function's
    other copies move it to or from (transitively, a few copies far): their typed accesses
    within the bytes each copy moves (a Vec's header copied into the front of a struct whose
    f64 field follows it says nothing of that field), and what the functions they are handed
    to read them as (typeinfo.callee_kinds)."""
    windows = {}                               # object -> (first byte, end) or None: all of it

    def see(ptr, size):
        base, off = decompose(module, fn, ptr)
        obj = underlying(fn, base)
        win = (off, off + size) if off is not None and size is not None and obj == base \
            else None
        if obj in windows and windows[obj] != win:
            old = windows[obj]
            win = None if old is None or win is None else (min(old[0], win[0]),
                                                          max(old[1], win[1]))
        new = obj not in windows or windows[obj] != win
        windows[obj] = win
        return new

    copies = [i for i in fn.insts() if i.op in ("call", "invoke") and len(i.ops) >= 3 and
              (i.callee or "").startswith(_COPIES)]
    for o in ends:
        if o.startswith("%"):
            see(o, None)
    slots = _pointer_slots(module, fn)
    for _ in range(4):
        grew = False
        for c in copies:
            a, b = c.ops[0].value, c.ops[1].value
            if {underlying(fn, a), underlying(fn, b)} & windows.keys():
                size = int(c.ops[2].value) if c.ops[2].value.isdigit() else None
                grew |= any([see(e, size) for e in (a, b) if e.startswith("%")])
        # the block's address kept in a slot and read back from it (a Vec's buffer in its
        # header: Rust's `to_vec` copies into a block that later code reaches through it)
        for r in {r for o in list(windows) for slot in slots[0].get(o, ())
                  for r in slots[1].get(slot, ())}:
            if underlying(fn, r) not in windows:
                grew |= see(r, None)
        if not grew:
            break
    kinds = set()
    for o, win in windows.items():
        kinds |= {k for off, k in info.pointee_summary(o).items()
                  if off == "*" or off >= 0 and (win is None or win[0] <= off < win[1])}
    kinds -= {"int"}
    return kinds or callee_kinds(module, fn, {info._find(o) for o in windows}, info)


def _pointer_slots(module, fn):
    """({pointer: the (base, offset) slots it is stored to or loaded from}, {slot: the
    pointers stored to or loaded from it}), constant offsets only; one pass, kept on the
    function. Pointers that meet in a slot point at data of one type (a Vec's buffer)."""
    memo = getattr(fn, "_pointer_slots", None)
    if memo is None:
        of, at = {}, {}
        for inst in fn.insts():
            if inst.op == "store" and inst.ops[0].ty == "ptr" and inst.ops[0].value.startswith("%"):
                ptr, slot = underlying(fn, inst.ops[0].value), decompose(module, fn, inst.ops[1].value)
            elif inst.op == "load" and inst.ty == "ptr":
                ptr, slot = inst.name, decompose(module, fn, inst.ops[0].value)
            else:
                continue
            if slot[1] is None:
                slot = element_slot(module, fn, inst.ops[1 if inst.op == "store" else 0].value)
            if slot is not None and slot[1] is not None:
                of.setdefault(ptr, set()).add(slot)
                at.setdefault(slot, set()).add(ptr)
        memo = fn._pointer_slots = (of, at)
    return memo


def _guessed(info, dst, src, off, size):
    """The ranges of an untagged field (a char array or a union: `omnipotent char`) from the
    typed accesses through either end, when they say what every byte of it holds: a lambda
    `[a, &phase]` copied into std::function's storage is a double and a pointer. Else the
    kind at its start over the whole field, or None: unknown."""
    for o in (dst, src):
        s = info.pointee_summary(o)
        inside = sorted((p, k) for p, k in s.items() if p != "*" and off <= p < off + size)
        if not inside or inside[0][0] != off:
            continue
        if len(inside) == 1 and WIDTH.get(inside[0][1], size) >= size:
            return [(off, size, inside[0][1])]
        ends = [p for p, _ in inside[1:]] + [off + size]
        if all(WIDTH.get(k, e - p) == e - p for (p, k), e in zip(inside, ends)):
            return [(p, e - p, k) for (p, k), e in zip(inside, ends)]
        if len({k for _, k in inside}) == 1 and inside[0][1] != "int":
            return [(off, size, inside[0][1])]   # (e.g. two doubles, the second not accessed)
        return [(off, size, None)]
    return [(off, size, None)]


def infer_copy_type(module, fn, inst, info: TypeInfo | None = None) -> str:
    """Single kind of a whole copy ('double', 'float', 'pointer', 'integer'), 'mixed' when the
    copy has ranges of several kinds, 'unknown' when nothing is known."""
    ranges = copy_ranges(module, fn, inst, info)
    if not ranges or any(k is None for _, _, k in ranges):
        return "unknown"
    kinds = {k for _, _, k in ranges}
    if len(kinds) > 1:
        return "mixed"
    k = kinds.pop()
    return {"ptr": "pointer", "int": "integer"}.get(k, k)


def block_records(module, fn, ptrs, info):
    """The record layout of the memory `ptrs` point into (and of the blocks realloc moves it
    to or from): the ranges the fixed-size copies into or out of it agree on (`b[i] = s[i]`),
    as RecordRanges with the record's stride, when they hold float data (a copy of several
    records is that many records); None when no copy shows a layout; when the copies
    disagree, the set of kinds they hold. Kept on `info` per family of blocks (copy_ranges
    asks it for each copy into the same memory)."""
    blocks = frozenset(realloc_family(fn, info, ptrs))
    cache = info.__dict__.setdefault("_block_records", {})
    if blocks not in cache:
        cache[blocks] = _block_records(module, fn, blocks, info)
    return cache[blocks]


def _block_records(module, fn, blocks, info):
    copies, shortened = [], set()
    for c in fn.insts():
        if c.op == "call" and (c.callee or "").startswith(("@llvm.memcpy", "@llvm.memmove")) and \
                c.ops[2].value.isdigit() and any(info._find(underlying(fn, o.value)) in blocks
                                                 for o in c.ops[:2]):
            ranges = copy_ranges(module, fn, c, info, evidence_only=True)
            if not ranges or any(k is None for _, _, k in ranges):
                continue                         # no evidence of its own
            copies.append((int(c.ops[2].value), ranges))
            tag = tbaa_struct(module, c.md.get("!tbaa.struct")) or {}
            if any(off + size > copies[-1][0] for off, (size, _) in tag.items()):
                shortened.add(len(copies) - 1)
    return agreed_records(copies, shortened) if copies else None
