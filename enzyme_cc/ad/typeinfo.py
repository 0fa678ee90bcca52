"""Type analysis, the part synthesis needs (seeds/001 Figure 2): what kind of data lies at a byte
offset of the memory a pointer points into, so that untyped copies (memcpy, and the i64/i32
load/store pairs LLVM makes of small memcpys) get the right adjoint.

Evidence, strongest first: TBAA tags (`!tbaa`, `!tbaa.struct`), typed loads and stores and GEP
source types on the same underlying object and offset, the allocated type of allocas and
globals, and hints from the caller for pointer arguments. Kinds: 'double', 'float', 'ptr',
'int'; None when nothing is known.
"""
from __future__ import annotations

import re
from types import SimpleNamespace

from enzyme_cc.ir.model import Operand
from enzyme_cc.ir.lexer import type_size, split_fields, type_align
from .unionfind import UnionFind

FLOATS = {"double", "float"}
# Enzyme's type annotation calls: `__enzyme_double(p)` says p points to doubles (type analysis
# evidence, like a typed access); the calls are removed after differentiation (markers.py)
TYPE_HINT = re.compile(r'@"?__enzyme_(double|float|integer|pointer)"?$')
_INT_NAMES = {"int", "long", "long long", "short", "bool", "_Bool", "unsigned int", "unsigned long",
              "signed char", "unsigned char", "wchar_t", "char16_t", "char32_t", "__int128"}


def underlying(fn, v: str, depth=0) -> str:
    d = fn.defs.get(v)
    if depth > 32 or d is None or not hasattr(d, "op"):
        return v
    if d.op in ("getelementptr", "bitcast", "addrspacecast"):
        return underlying(fn, d.ops[0].value, depth + 1)
    return v


def same_memory(fn):
    """(pointer, underlying object) pairs that denote the same memory: the incoming values of
    pointer phis/selects, and realloc's result and its old block (the data moves over)."""
    for inst in fn.insts():
        if inst.op in ("phi", "select") and inst.ty == "ptr":
            for o in (inst.ops[1:] if inst.op == "select" else inst.ops):
                if o.value.startswith("%"):
                    yield inst.name, underlying(fn, o.value)
        elif inst.op in ("call", "invoke") and inst.callee == "@realloc" and inst.name and \
                inst.ops and inst.ops[0].value.startswith("%"):
            yield inst.name, underlying(fn, inst.ops[0].value)


def decompose(module, fn, v: str, depth=0):
    """(underlying object, constant byte offset or None) of pointer v."""
    d = fn.defs.get(v)
    if depth > 32 or d is None or not hasattr(d, "op"):
        return v, 0
    if d.op in ("bitcast", "addrspacecast"):
        return decompose(module, fn, d.ops[0].value, depth + 1)
    if d.op != "getelementptr":
        return v, 0
    base, off = decompose(module, fn, d.ops[0].value, depth + 1)
    extra = gep_offset(module, d)
    return base, (off + extra) if off is not None and extra is not None else None


def gep_offset(module, gep):
    """Constant byte offset of a GEP, or None."""
    named = module.named_types
    ty = gep.src_ty
    try:
        idx = [int(o.value) for o in gep.ops[1:]]
    except ValueError:
        return None
    if not idx:
        return 0
    off = idx[0] * type_size(ty, named)
    for k in idx[1:]:
        body = named.get(ty.strip(), ty).strip()
        if body.startswith(("{", "<{")):
            fields = split_fields(body)
            pos = 0
            for f in fields[:k]:
                if not body.startswith("<{"):
                    pos = (pos + type_align(f, named) - 1) // type_align(f, named) * type_align(f, named)
                pos += type_size(f, named)
            f = fields[k]
            if not body.startswith("<{"):
                pos = (pos + type_align(f, named) - 1) // type_align(f, named) * type_align(f, named)
            off += pos
            ty = f
        elif body.startswith(("[", "<")) and " x " in body:
            ty = body[1:-1].split(" x ", 1)[1].strip()
            off += k * type_size(ty, named)
        else:
            return None
    return off


def scalar_kind(ty: str):
    ty = ty.strip()
    if ty in FLOATS:
        return ty
    if ty == "ptr":
        return "ptr"
    if ty.startswith("i") and ty[1:].isdigit():
        return "int"
    return None


def layout(ty: str, named, base=0) -> dict:
    """offset -> scalar kind for every scalar in a (possibly nested) type."""
    ty = named.get(ty.strip(), ty).strip()
    out = {}
    if ty.startswith(("{", "<{")):
        pos = 0
        for f in split_fields(ty):
            if not ty.startswith("<{"):
                a = type_align(f, named)
                pos = (pos + a - 1) // a * a
            out.update(layout(f, named, base + pos))
            pos += type_size(f, named)
        return out
    if ty.startswith(("[", "<")) and not ty.startswith("<{") and " x " in ty:
        n, elem = ty[1:-1].split(" x ", 1)
        size = type_size(elem.strip(), named)
        for k in range(min(int(n), 4096)):
            out.update(layout(elem.strip(), named, base + k * size))
        return out
    k = scalar_kind(ty)
    if k:
        out[base] = k
    return out


def tbaa_kind(module, tag: str | None):
    """Scalar kind of a TBAA access tag (!{base, access, offset}), None for char/unknown."""
    node = module.metadata.get(tag or "")
    if not node:
        return None
    refs = re.findall(r"![0-9]+", node)
    if len(refs) < 2:
        return None
    name = re.search(r'!"([^"]*)"', module.metadata.get(refs[1], ""))
    if not name:
        return None
    n = name.group(1)
    if n in FLOATS:
        return n
    if "pointer" in n or n.startswith("p1 ") or n.startswith("p2 ") or n.endswith("*"):
        return "ptr"
    if n in _INT_NAMES or n.startswith(("int", "long", "unsigned", "short")):
        return "int"
    return None


def tbaa_name(module, tag: str | None):
    """Name of the access type of a TBAA tag ("double", "omnipotent char", "p1 int"...)."""
    refs = re.findall(r"![0-9]+", module.metadata.get(tag or "", ""))
    if len(refs) < 2:
        return None
    m = re.search(r'!"([^"]*)"', module.metadata.get(refs[1], ""))
    return m.group(1) if m else None


def tbaa_is_field(module, tag: str | None) -> bool:
    """A struct-path access tag (base type differs from the access type): a struct field."""
    refs = re.findall(r"![0-9]+", module.metadata.get(tag or "", ""))
    return len(refs) >= 2 and refs[0] != refs[1]


def tbaa_pointee(module, tag: str | None):
    """Kind of the data a pointer points to, from a pointer TBAA tag ("p1 double" -> double,
    "p2 ..." -> ptr), None otherwise."""
    node = module.metadata.get(tag or "")
    refs = re.findall(r"![0-9]+", node or "")
    if len(refs) < 2:
        return None
    m = re.search(r'!"p(\d+) ([^"]*)"', module.metadata.get(refs[1], ""))
    if not m:
        return None
    if m.group(1) != "1":
        return "ptr"
    return m.group(2) if m.group(2) in FLOATS else "int" if m.group(2) in _INT_NAMES else None


def tbaa_struct(module, md: str | None) -> dict:
    """!tbaa.struct of a memcpy: offset -> (size, kind)."""
    node = module.metadata.get(md or "")
    if not node:
        return {}
    parts = re.findall(r"i64 (-?\d+), i64 (\d+), (![0-9]+)", node)
    return {int(o): (int(s), tbaa_kind(module, t)) for o, s, t in parts}


def global_type(module, name: str) -> str | None:
    """Value type of a global variable from its definition line."""
    from enzyme_cc.ir.lexer import tokenize, parse_type
    line = module.globals.get(name, "")
    toks = tokenize(line)
    for k, t in enumerate(toks):
        if t in ("global", "constant"):
            try:
                return parse_type(toks, k + 1)[0]
            except (ValueError, IndexError):
                return None
    return None


class TypeInfo:
    """Per function: offset -> kind evidence for each underlying object."""

    def __init__(self, module, fn, hints: dict | None = None):
        self.module, self.fn = module, fn
        self.hints = hints or {}          # param name -> {offset: kind} or {'*': kind}
        self.facts: dict[str, dict] = {}
        self.uniform: dict[str, set] = {}
        self.float_accesses: dict[str, dict] = {}   # object -> {offset: kind} of float-typed IR accesses
        self.chars: dict[str, set] = {}     # object -> offsets accessed as characters
        self.records: dict[str, set] = {}   # pointer class -> struct types GEPs index it by
        # pointers joined by phi/select (or realloc) denote the same memory for typing purposes
        self._classes = UnionFind()
        self._find, self._union = self._classes.find, self._classes.union
        for a, b in same_memory(fn):
            self._union(a, b)
        # unoptimized code spills pointers (arguments) to allocas: a load from an alloca written
        # by one store of a pointer is that pointer
        stores: dict[str, list] = {}
        for inst in fn.insts():
            if inst.op == "store":
                stores.setdefault(underlying(fn, inst.ops[1].value), []).append(inst)
        for inst in fn.insts():
            if inst.op == "load" and inst.ty == "ptr":
                st = stores.get(inst.ops[0].value, [])
                d = fn.defs.get(inst.ops[0].value)
                if len(st) == 1 and getattr(d, "op", None) == "alloca" and \
                        st[0].ops[0].ty == "ptr" and st[0].ops[0].value.startswith("%"):
                    self._union(inst.name, underlying(fn, st[0].ops[0].value))
        self.class_hints = {self._find(p): h for p, h in self.hints.items()}
        named = module.named_types
        declared: dict = {}                   # alloca -> layout of its declared type
        for inst in fn.insts():
            if inst.op == "load":
                self._note(inst.ops[0].value, inst.ty, inst.md.get("!tbaa"))
                if inst.ty == "ptr":
                    self._pointee(inst.name, inst.md.get("!tbaa"))
                    self._char_pointer(inst.name, inst.md.get("!tbaa"))
            elif inst.op == "store":
                self._note(inst.ops[1].value, inst.ops[0].ty, inst.md.get("!tbaa"))
                if inst.ops[0].ty == "ptr" and inst.ops[0].value.startswith("%"):
                    self._pointee(underlying(fn, inst.ops[0].value), inst.md.get("!tbaa"))
                    self._char_pointer(inst.ops[0].value, inst.md.get("!tbaa"))
            elif inst.op == "call" and TYPE_HINT.match(inst.callee or "") and inst.ops:
                self._hint(inst.ops[0].value, TYPE_HINT.match(inst.callee).group(1))
            elif inst.op == "getelementptr" and inst.src_ty not in ("i8",):
                b = self._find(underlying(fn, inst.ops[0].value))
                for k in set(layout(inst.src_ty, named).values()) - {"int"}:
                    self.uniform.setdefault(b, set()).add(k)
                if inst.src_ty.strip().startswith("%"):     # it points at records of a struct type
                    self.records.setdefault(b, set()).add(inst.src_ty.strip())
            elif inst.op == "alloca" and inst.src_ty not in ("i8",) and "x i8 ]" not in inst.src_ty \
                    and not _unions_hide(inst.src_ty, named):
                declared[inst.name] = layout(inst.src_ty, named)
        for obj, lay in declared.items():     # typed accesses win over the declared type
            self.facts[obj] = {**lay, **self.facts.get(obj, {})}

    def _hint(self, ptr, name):
        """Enzyme's `__enzyme_double(p)` (float, integer, pointer): p points to that type."""
        kind = {"double": "double", "float": "float", "integer": "int", "pointer": "ptr"}[name]
        base, off = decompose(self.module, self.fn, ptr)
        if off is not None:
            self.facts.setdefault(base, {})[off] = kind
            if kind in FLOATS:
                self.float_accesses.setdefault(base, {}).setdefault(off, kind)
        if kind != "int":
            self.uniform.setdefault(self._find(base), set()).add(kind)

    def _pointee(self, ptr, tag):
        """A pointer loaded or stored with a typed pointer TBAA tag points to that type."""
        kind = tbaa_pointee(self.module, tag)
        if kind and kind != "int":
            self.uniform.setdefault(self._find(ptr), set()).add(kind)

    def _char_pointer(self, ptr, tag):
        """A `char *` (TBAA "p1 omnipotent char", e.g. a std::string's buffer) points at
        character data."""
        if tbaa_name(self.module, tag) == "p1 omnipotent char":
            base, off = decompose(self.module, self.fn, ptr)
            self.chars.setdefault(base, set()).add(off)

    def _note(self, ptr, ty, tag):
        base, off = decompose(self.module, self.fn, ptr)
        if ty.strip() == "i8" or (scalar_kind(ty) == "int" and
                                  tbaa_name(self.module, tag) == "omnipotent char"):
            self.chars.setdefault(base, set()).add(off)       # a character access
        if off is not None and scalar_kind(ty) in FLOATS:
            self.float_accesses.setdefault(base, {}).setdefault(off, scalar_kind(ty))
        kind = tbaa_kind(self.module, tag) or (scalar_kind(ty) if scalar_kind(ty) != "int" else None)
        if kind is None:
            return
        if off is not None:
            self.facts.setdefault(base, {}).setdefault(off, kind)
        if kind != "int":
            self.uniform.setdefault(self._find(base), set()).add(kind)

    def _global(self, base):
        ty = global_type(self.module, base)
        return layout(ty, self.module.named_types) if ty else {}

    def kind_at(self, ptr: str, tag=None):
        """Kind of the scalar a load/store through ptr accesses."""
        k = tbaa_kind(self.module, tag)
        if k:
            return k
        base, off = decompose(self.module, self.fn, ptr)
        facts = dict(self._global(base)) if base.startswith("@") else {}
        facts.update(self.hints.get(base) or self.class_hints.get(self._find(base), {}))
        facts.update(self.facts.get(base, {}))
        if off is not None and off in facts:
            return facts[off]
        kinds = set(facts.values()) - {"int"} | self.uniform.get(self._find(base), set())
        if "*" in facts:
            kinds.add(facts["*"])
        return kinds.pop() if len(kinds) == 1 else None

    def content_kind(self, ptr: str, tag=None, size: int | None = None):
        """Kind of the data an integer load/store (of `size` bytes) at ptr moves. Type punning
        (`*(long long *)&x` of a double x) gives the access an integer TBAA tag although the
        memory holds a float: a float-typed load or store at the same byte wins over the tag.
        Without a tag and evidence at that byte (an SROA'd struct copy's pieces), the declared
        type of the memory says, where it names one kind for the accessed bytes."""
        k = tbaa_kind(self.module, tag)
        if k in (None, "int"):
            base, off = decompose(self.module, self.fn, ptr)
            hint = self.hints.get(base) or self.class_hints.get(self._find(base), {})
            # (a struct-path tag names an integer field: only exact evidence overrides it)
            uniform = None if off in hint or tbaa_is_field(self.module, tag) else hint.get("*")
            for f in (self.float_accesses.get(base, {}).get(off), hint.get(off), uniform):
                if f in FLOATS:
                    return f
        k = self.kind_at(ptr, tag)
        if k is None and size:
            k = declared_kind(self.module, self.fn, ptr, size, self)
        return k

    def char_data(self, ptr: str, length) -> bool:
        """The bytes [ptr, ptr+length) are characters: accessed as bytes or char-tagged
        integers at ptr, or pointed to by a char pointer, and nothing typed there is a float or
        a pointer."""
        base, off = decompose(self.module, self.fn, ptr)
        if off is None or off not in self.chars.get(base, ()):
            return False
        facts = self.facts.get(base, {})
        end = off + length if length is not None else None
        return not any(k != "int" and o >= off and (end is None or o < end)
                       for o, k in facts.items() if o != "*")

    def pointee_summary(self, ptr: str) -> dict:
        """Evidence about the memory ptr points to, as a hint for a callee's parameter."""
        base, off = decompose(self.module, self.fn, ptr)
        facts = dict(self._global(base)) if base.startswith("@") else {}
        facts.update(self.hints.get(base) or self.class_hints.get(self._find(base), {}))
        facts.update(self.facts.get(base, {}))
        if off:
            facts = {o - off: k for o, k in facts.items() if o != "*" and o >= off}
        kinds = (set(facts.values()) - {"int"}) | self.uniform.get(self._find(base), set())
        if len(kinds) == 1:
            facts["*"] = next(iter(kinds))
        return facts


def access_types(module, fn, base: str) -> set:
    """Float/pointer kinds of all typed accesses to one underlying object (memcpy fallback)."""
    info = TypeInfo(module, fn)
    return (set(info.facts.get(base, {}).values()) - {"int"}) | info.uniform.get(info._find(base), set())


def copy_ranges(module, fn, inst, info: TypeInfo | None = None):
    """Byte ranges of a memcpy/memmove by kind: [(offset, size, kind)], or [(0, None, kind)]
    for a copy of unknown length with one element kind, or None when unknown."""
    info = info or TypeInfo(module, fn)
    dst, src, n = inst.ops[:3]
    try:
        length = int(n.value)
    except ValueError:
        length = None
    ts = tbaa_struct(module, inst.md.get("!tbaa.struct"))
    if length is not None and ts:
        ranges = []
        for off, (size, kind) in sorted(ts.items()):
            ranges.append((off, size, kind or _guess(info, dst.value, src.value, off)))
        if any(k is None for _, _, k in ranges):
            return _declared_ranges(module, fn, (dst.value, src.value), length, info) or ranges
        return ranges
    if length is None:
        # a run of records: their declared struct type is stronger evidence than the kinds
        # accessed anywhere in the memory (a struct's double field alone says "double")
        rec = record_ranges(module, fn, (dst.value, src.value), info)
        if rec is not None:
            return rec
    if any(info.char_data(o, length) for o in (dst.value, src.value)):
        return [(0, length, "int")]          # characters (a string's): no derivative
    # a struct's declared layout outranks the kinds this function happens to access in it (a
    # sort that only reads the int key of records holding doubles and pointers); a declared
    # type of integers alone does not (an SROA'd slot typed i64 may hold a double)
    declared = _declared_ranges(module, fn, (dst.value, src.value), length, info) \
        if length is not None else None
    if declared and any(k != "int" for _, _, k in declared):
        return declared
    kinds = set()
    for o in (dst.value, src.value):
        s = info.pointee_summary(o)
        kinds |= set(s.values()) - {"int"}
    if len(kinds) == 1:
        return [(0, length, kinds.pop())]
    if not kinds:
        allint = all(set(info.pointee_summary(o).values()) == {"int"} for o in (dst.value, src.value))
        if allint:
            return [(0, length, "int")]
    return declared


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
        ty, off = _containing_type(module, fn, p)
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


def _record_of(module, fn, info, p):
    """(struct type, byte offset of p from a record's start) for a pointer into memory that
    GEPs index by one struct type only (a pointer walking an array of records, as std::sort's
    moves do: `p - 56`), or (None, None)."""
    base, off = decompose(module, fn, p)
    tys = info.records.get(info._find(base), set())
    if len(tys) != 1 or off is None:
        return None, None
    return next(iter(tys)), off


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
        ty, off = _containing_type(module, fn, p)
        if not ty and info is not None:
            ty, off = _record_of(module, fn, info, p)
        if not ty or off is None:
            # the other ends of this function's copies of as many bytes with p: `S t = *a;
            # *a = *b; *b = t;` copies *b's type from t's declaration (the pointers reloaded
            # from one spill slot, at -O0, are one pointer)
            ptrs += _copied_with(fn, p, length)
            continue
        if opaque_layout(ty, named):
            if off == 0 and ty.startswith("[") and p in fn.defs:
                ptrs += _copied_with(fn, p, length)   # an SROA slice: typed where it goes
            continue
        size = type_size(ty, named)
        if not size:
            continue
        off %= size                          # an element of an array of ty
        count = (off + length + size - 1) // size
        lay = layout(f"[{count} x {ty}]" if count > 1 else ty, named)
        if any(o < off < o + (4 if k == "float" else 8) for o, k in lay.items() if k != "int"):
            continue                         # starts inside a float or a pointer
        lay = {o - off: k for o, k in lay.items() if off <= o < off + length}
        if not lay:
            continue
        if 0 not in lay:
            lay[0] = "int"                   # leading padding
        offs = sorted(lay) + [length]
        ranges = []
        for i, o in enumerate(offs[:-1]):    # adjacent scalars of one kind: one range
            if ranges and ranges[-1][2] == lay[o]:
                ranges[-1] = (ranges[-1][0], offs[i + 1] - ranges[-1][0], lay[o])
            else:
                ranges.append((o, offs[i + 1] - o, lay[o]))
        return ranges
    return None


def declared_kind(module, fn, ptr: str, size: int, info=None):
    """The one scalar kind the declared type (of the alloca, global or typed GEP ptr points
    into, or the one struct type GEPs index its memory by) has in the `size` bytes at ptr, or
    None: bytes, unions, mixed kinds, or an access that does not start on a scalar."""
    ty, off = _containing_type(module, fn, ptr)
    if not ty and info is not None:
        ty, off = _record_of(module, fn, info, ptr)
    if not ty or off is None:
        return None
    named = module.named_types
    tsize = type_size(ty, named)
    if opaque_layout(ty, named) or not tsize:
        return None
    lay = layout(ty, named)
    off %= tsize                              # an element of an array of ty
    if off not in lay:
        return None
    kinds = {k for o, k in lay.items() if off <= o < off + size}
    return kinds.pop() if len(kinds) == 1 else None


def _copied_with(fn, buf, length):
    """The other ends of the fixed-size copies of `length` bytes into or out of buf."""
    out = []
    key = _spilled(fn, buf)
    for inst in fn.insts():
        if inst.op == "call" and (inst.callee or "").startswith(("@llvm.memcpy", "@llvm.memmove")) \
                and len(inst.ops) >= 3 and inst.ops[2].value == str(length):
            a, b = inst.ops[0].value, inst.ops[1].value
            if key in (_spilled(fn, a), _spilled(fn, b)):
                out.append(b if _spilled(fn, a) == key else a)
    return out


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


def _containing_type(module, fn, p):
    """(type, byte offset of p in it) for p = a chain of GEPs from a typed GEP, an alloca or a
    global: a typed GEP's leading (array) index is taken as element 0. (None, None) if unknown."""
    off = 0
    for _ in range(32):
        d = fn.defs.get(p)
        op = getattr(d, "op", None)
        if op in ("bitcast", "addrspacecast"):
            p = d.ops[0].value
            continue
        if op == "alloca":
            return d.src_ty, off
        if p.startswith("@"):
            return global_type(module, p), off
        if op != "getelementptr" or not d.src_ty:
            return None, None
        if d.src_ty.strip() == "i8":
            try:
                off += sum(int(o.value) for o in d.ops[1:])
            except ValueError:
                return None, None
            p = d.ops[0].value
            continue
        rest = [o.value for o in d.ops[2:]]
        if not all(v.lstrip("-").isdigit() for v in rest):
            return None, None
        inner = gep_offset(module, SimpleNamespace(src_ty=d.src_ty, ops=[d.ops[0], Operand(
            "i64", "0")] + list(d.ops[2:])))
        if inner is None:
            return None, None
        if d.ops[1].value.lstrip("-").isdigit():   # constant: an offset into the base object
            bt, bo = _containing_type(module, fn, d.ops[0].value)
            if bt is not None:
                return bt, bo + off + gep_offset(module, d)
        return d.src_ty, off + inner
    return None, None


def opaque_layout(ty: str, named) -> bool:
    """The IR type says nothing reliable about the data: a byte or short array or scalar (an
    SROA slice, a buffer), or a union that may hold a float where its IR type has another
    scalar. (Char fields and arrays inside a struct are what they say: integers.)"""
    top = named.get(ty.strip(), ty).strip()
    elem = top[1:-1].split(" x ", 1)[1].strip() if top.startswith("[") and " x " in top else top
    return elem in ("i8", "i16") or _unions_hide(ty, named)


def _unions_hide(ty: str, named) -> bool:
    """ty holds a union whose IR type (the member clang picked: the most aligned, then the
    largest) is not all floats: another member may be a float. A union whose IR type is a
    float holds float data or data its copies may treat as such (an integer's shadow is zero)."""
    for name in re.findall(r'%"?union\.[-\w.$]+"?', _with_unions(ty, named)):
        body = named_expand(named.get(name, ""), named)
        if not body or set(layout(body, named).values()) - FLOATS:
            return True
    return False


def _with_unions(ty: str, named) -> str:
    """ty with every named type but unions expanded (so the unions it holds are named)."""
    for _ in range(4):
        new = re.sub(r"%[-\w.$\"]+(?!\w)", lambda m: named.get(m.group(0), m.group(0))
                     if m.group(0) in named and "union." not in m.group(0) else m.group(0), ty)
        if new == ty:
            break
        ty = new
    return ty


def named_expand(ty: str, named, keep_names: bool = False) -> str:
    """A type's text with named struct types replaced by their bodies (a few levels); with
    keep_names each body is preceded by its name (to see e.g. `%union.`)."""
    import re
    for _ in range(4):
        new = re.sub(r"%[-\w.$\"]+(?!\w)", lambda m: (m.group(0)[1:] + " " if keep_names else "")
                     + named.get(m.group(0), m.group(0)) if m.group(0) in named else m.group(0), ty)
        if new == ty:
            break
        ty = new
    return ty


def _guess(info, dst, src, off):
    for o in (dst, src):
        s = info.pointee_summary(o)
        if off in s:
            return s[off]
    return None


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
