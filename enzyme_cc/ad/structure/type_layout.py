"""What IR types and declarations say about memory: byte offsets and scalar kinds of a type
('double', 'float', 'ptr', 'int'), TBAA tags, the declared type a pointer points into (an
alloca's, a global's, a typed GEP's, or the one record type GEPs index the memory by), and
which declared types say nothing reliable (byte arrays, unions hiding a float). The analyses
above it: typeinfo.py (per-function evidence), copy_types.py (what a memcpy moves)."""
from __future__ import annotations

import re
from types import SimpleNamespace

from enzyme_cc.ir.model import Operand
from enzyme_cc.ir.lexer import (carries_float, name_ref, type_size, split_fields, type_align,
                                parse_type, tokenize)

FLOATS = {"double", "float"}
_INT_NAMES = {"int", "long", "long long", "short", "bool", "_Bool", "unsigned int", "unsigned long",
              "signed char", "unsigned char", "wchar_t", "char16_t", "char32_t", "__int128"}


def underlying(fn, v: str, depth=0) -> str:
    d = fn.defs.get(v)
    if depth > 32 or d is None or not hasattr(d, "op"):
        return v
    if d.op in ("getelementptr", "bitcast", "addrspacecast"):
        return underlying(fn, d.ops[0].value, depth + 1)
    return v


def global_named(v: str) -> str | None:
    """The global a constant operand names: `@g` itself, or the one a constant expression over
    it names (`getelementptr (i8, ptr @g, i64 8)`); None for other constants."""
    return next((t.strip(",()") for t in v.split() if t.startswith("@")), None)


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
    """(underlying object, constant byte offset or None) of pointer v (a constant GEP of a
    global: that global, at the GEP's offset)."""
    d = fn.defs.get(v)
    if d is None and v.startswith("getelementptr"):
        return constant_gep(module, v) or (v, 0)
    if depth > 32 or d is None or not hasattr(d, "op"):
        return v, 0
    if d.op in ("bitcast", "addrspacecast"):
        return decompose(module, fn, d.ops[0].value, depth + 1)
    if d.op in ("phi", "select") and d.ty == "ptr":
        key = (id(fn), v)
        if key in _JOINING:             # (while its own GEPs are decomposed: a loop's phi)
            return v, 0
        _JOINING.add(key)
        try:
            return _joined_field(module, fn, v) or (v, 0)
        finally:
            _JOINING.discard(key)
    if d.op != "getelementptr":
        return v, 0
    base, off = decompose(module, fn, d.ops[0].value, depth + 1)
    extra = gep_offset(module, d)
    return base, (off + extra) if off is not None and extra is not None else None


_JOINING: set = set()       # the phis whose pointers decompose() is following now


def _joined_field(module, fn, v: str):
    """(object, offset) where every pointer the phis and selects behind v join lies at that
    one offset of one object (a GEP sunk into both arms of a branch, and phis of those), or
    None."""
    leaves, work, done = set(), [v], set()
    while work:
        w = work.pop()
        if w in done:
            continue
        done.add(w)
        d = fn.defs.get(w)
        if getattr(d, "op", None) in ("phi", "select") and d.ty == "ptr":
            work += [o.value for o in (d.ops[1:] if d.op == "select" else d.ops)]
        else:
            leaves.add(decompose(module, fn, w))
        if len(leaves) > 1 or len(done) > 16:
            return None
    one = leaves.pop() if leaves else None
    return one if one is not None and one[1] is not None and one[0] not in done else None


# a constant GEP operand over a global, as the parser spaces it:
# `getelementptr inbounds nuw ( i8 , ptr @dls001_ , i64 1888 )`
_CONST_GEP = re.compile(r"getelementptr[^(]*\(\s*(.+?)\s*,\s*ptr\s+(@\"[^\"]+\"|@[-\w.$]+)\s*"
                        r"((?:,\s*i(?:8|16|32|64)\s+-?\d+\s*)*)\)$")


def constant_gep(module, v: str):
    """(global, constant byte offset) of a constant GEP operand over a global, or None (flang
    addresses a COMMON block's members so: FORTRAN 77's shared state)."""
    m = _CONST_GEP.match(v)
    if not m:
        return None
    off = const_gep_offset(module, m.group(1), m.group(3))
    return (m.group(2), off) if off is not None else None


class _Index:
    def __init__(self, value):
        self.value = value


class _ConstGep:
    """A constant GEP's source type and indices, as gep_offset reads an instruction's."""

    def __init__(self, ty, indices):
        self.src_ty = ty
        self.ops = [_Index("")] + [_Index(k) for k in indices]


def const_gep_offset(module, ty: str, indices: str) -> int | None:
    """Byte offset of a constant GEP over type `ty` with `, i64 K, i32 J, ...` indices."""
    ks = re.findall(r"-?\d+(?=\s*(?:,|$))", indices)
    try:
        return gep_offset(module, _ConstGep(ty.strip(), ks))
    except (ValueError, KeyError, IndexError):
        return None


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
        step = gep_step(ty, k, named)
        if step is None:
            return None
        ty, pos, _ = step
        off += pos
    return off


def gep_step(ty: str, k: int | None, named):
    """(the type a GEP index into ty selects, its constant byte offset, the byte size one step
    of a run-time index moves: 0 for a struct's field) for index value k (None: not constant),
    or None where ty is not indexable so."""
    body = named.get(ty.strip(), ty).strip()
    if body.startswith(("{", "<{")):
        if k is None:
            return None
        fields = split_fields(body)
        pos = 0
        for j, f in enumerate(fields[:k + 1]):
            if not body.startswith("<{"):
                pos = (pos + type_align(f, named) - 1) // type_align(f, named) * type_align(f, named)
            if j < k:
                pos += type_size(f, named)
        return fields[k], pos, 0
    if body.startswith(("[", "<")) and " x " in body:
        el = body[1:-1].split(" x ", 1)[1].strip()
        size = type_size(el, named)
        return el, (k or 0) * size, size
    return None


def scalar_kind(ty: str):
    ty = ty.strip()
    if ty in FLOATS:
        return ty
    if ty == "ptr":
        return "ptr"
    if ty.startswith("i") and ty[1:].isdigit():
        return "int"
    return None


def struct_fields(ty: str, named):
    """(field type, byte offset) of each field of a struct type's body (`{...}` or packed)."""
    pos = 0
    for f in split_fields(ty):
        if not ty.startswith("<{"):
            a = type_align(f, named)
            pos = (pos + a - 1) // a * a
        yield f, pos
        pos += type_size(f, named)


def layout(ty: str, named, base=0) -> dict:
    """offset -> scalar kind for every scalar in a (possibly nested) type."""
    ty = named.get(ty.strip(), ty).strip()
    out = {}
    if ty.startswith(("{", "<{")):
        for f, pos in struct_fields(ty, named):
            out.update(layout(f, named, base + pos))
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
    if n.startswith("_ZTS"):
        return "int"      # (a C++ enum: its own type node, by its mangled name; an access
        #                    type is a scalar, so not a struct: ios_base's _Ios_Fmtflags)
    return tbaa_scalar_kind(n)


def tbaa_scalar_kind(n: str):
    """The kind a scalar TBAA type node's name says (None for char and unknown names)."""
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


def tbaa_field(module, tag: str | None):
    """(base type node, offset) of a struct-path access tag (a struct field), else None."""
    node = module.metadata.get(tag or "", "")
    m = re.match(r"!\{(![0-9]+), (![0-9]+), i64 (\d+)", node.strip())
    return (m.group(1), int(m.group(3))) if m and m.group(1) != m.group(2) else None


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


_REACHES_FLOATS = re.compile(
    r'!"p(?:1 _ZTSSt(?:6vector|8valarray)I(d|f|\d+\w+?)(?:SaI|E")|[2-9] (double|float)")')


def tbaa_reached_floats(module, tag: str | None):
    """Kind of the floats a pointer's target leads to through its own pointers, from its TBAA
    tag: a `std::vector<double> *` ("p1 _ZTSSt6vectorIdSaIdEE"), a `std::valarray<double> *`
    ("p1 _ZTSSt8valarrayIdE": its expression templates keep such pointers), a vector of records
    holding doubles ("p1 _ZTSSt6vectorI3ObsSaIS0_EE", `struct Obs` of the module's types), a
    `double **` ("p2 double"); None otherwise."""
    node = module.metadata.get(tag or "")
    refs = re.findall(r"![0-9]+", node or "")
    m = _REACHES_FLOATS.search(module.metadata.get(refs[1], "")) if len(refs) >= 2 else None
    if not m:
        return None
    elem = m.group(1)
    if m.group(2) or elem in ("d", "f"):
        return m.group(2) or {"d": "double", "f": "float"}[elem]
    name = re.match(r"(\d+)(\w+)", elem)
    if not name or len(name.group(2)) != int(name.group(1)):
        return None
    named = module.named_types
    own = re.compile(r"%(?:struct|class)\." + re.escape(name.group(2)) + r"(?:\.\d+)?$")
    for key, body in named.items():     # (the merge numbers the types of each module)
        if own.match(key):
            floats = [k for k in layout(named_expand(body, named), named).values() if k in FLOATS]
            return floats[0] if floats else None
    return None


def tbaa_struct(module, md: str | None) -> dict:
    """!tbaa.struct of a memcpy: offset -> (size, kind)."""
    node = module.metadata.get(md or "")
    if not node:
        return {}
    parts = re.findall(r"i64 (-?\d+), i64 (\d+), (![0-9]+)", node)
    return {int(o): (int(s), tbaa_kind(module, t)) for o, s, t in parts}


def global_type(module, name: str) -> str | None:
    """Value type of a global variable from its definition line."""
    line = module.globals.get(name, "")
    toks = tokenize(line)
    for k, t in enumerate(toks):
        if t in ("global", "constant"):
            try:
                return parse_type(toks, k + 1)[0]
            except (ValueError, IndexError):
                return None
    return None


def constant_float_global(module, v: str) -> bool:
    """v is the address of a constant global holding float data (or a constant expression over
    one): its shadow is a zeroed scratch (shadow_storage.constant_shadow)."""
    g = global_named(v)
    if not g or not module.is_constant_global(g):
        return False
    ty = global_type(module, g)
    return bool(ty) and carries_float(named_expand(ty, module.named_types))


def pinned_constant(module, g: str) -> str | None:
    """For a mutable pointer global that the program only ever reads (no store, no other use
    of its address) and whose initializer is the address of a constant global holding floats
    (GSL's `gsl_multifit_robust_bisquare = &bisquare_type`): that address; else None."""
    memo = module.__dict__.setdefault("_pinned", {})
    if g in memo:
        return memo[g]
    memo[g] = None
    line = module.globals.get(g, "")
    m = re.match(r"\S+\s*=\s*(?:[\w()]+\s+)*?global\s+ptr\s+(\S+?),?(?:\s|$)", line)
    if not g.startswith("@") or not m or not constant_float_global(module, m.group(1)):
        return None
    ref = name_ref(g)
    read = re.compile(r"=\s*load\s+(?:volatile\s+)?ptr,\s*ptr\s+" + re.escape(g) + r"\s*(,|$)")
    for line in module._lines:
        if ref.search(line) and not line.startswith(g + " ") and \
                (len(ref.findall(line)) != 1 or not read.search(line)):
            return None
    memo[g] = m.group(1)
    return memo[g]


def declared_kind(module, fn, ptr: str, size: int, info=None):
    """The one scalar kind the declared type (of the alloca, global or typed GEP ptr points
    into, or the one struct type GEPs index its memory by) has in the `size` bytes at ptr, or
    None: bytes, unions, mixed kinds, or an access that does not start on a scalar."""
    ty, off = containing_type(module, fn, ptr)
    if not ty and info is not None:
        ty, off = record_of(module, fn, info, ptr)
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
    inside = {o - off: k for o, k in lay.items() if off <= o < off + size}
    kinds = set(inside.values())
    if len(kinds) == 1:
        return kinds.pop()
    # integers beside one float kind in one access (SROA copies `int id; float w;` as an i64):
    # float data whose integer lanes carry a zero shadow, as long as the floats sit on lanes
    width = {"float": 4, "double": 8}
    floats = kinds - {"int"}
    if len(floats) == 1 and kinds <= {"int", "float", "double"}:
        f = floats.pop()
        if all(o % width[f] == 0 for o, k in inside.items() if k == f) and size % width[f] == 0:
            return f
    return None


def record_of(module, fn, info, p):
    """(struct type, byte offset of p from a record's start) for a pointer into memory that
    GEPs index by one struct type only (a pointer walking an array of records, as std::sort's
    moves do: `p - 56`), or (None, None)."""
    base, off = decompose(module, fn, p)
    tys = info.records.get(info._find(base), set())
    if len(tys) != 1 or off is None:
        return None, None
    return next(iter(tys)), off


def containing_type(module, fn, p):
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
            bt, bo = containing_type(module, fn, d.ops[0].value)
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
    return elem in ("i8", "i16") or unions_hide(ty, named)


def unions_hide(ty: str, named) -> bool:
    """ty holds a union whose IR type (the member clang picked: the most aligned, then the
    largest) is not all floats: another member may be a float. A union whose IR type is a
    float holds float data or data its copies may treat as such (an integer's shadow is zero)."""
    for name in re.findall(r'%"union\.[^"]*"|%union\.[-\w.$]+', _with_unions(ty, named)):
        body = named_expand(named.get(name, ""), named)
        if not body or set(layout(body, named).values()) - FLOATS:
            return True
    return False


def union_hides_range(ty: str, named, lo: int, hi: int) -> bool:
    """A union inside ty overlaps bytes [lo, hi) and may hide floats there (hiding_unions)."""
    return any(a < hi and lo < b for a, b in hiding_unions(ty, named))


def hiding_unions(ty: str, named, base: int = 0, limit: int = 64) -> list:
    """The byte ranges [(start, end)] of the unions inside ty (named types expanded, C++'s
    quoted ones too) whose IR type is not all floats: std::function's _Any_data, whose IR type
    is two i64s, keeps a lambda's captured doubles or pointers in those bytes. Arrays: their
    first `limit` elements."""
    name = ty.strip()
    if name.startswith(('%"union.', "%union.")):
        body = named_expand(named.get(name, ""), named)
        if not body or set(layout(body, named).values()) - FLOATS:
            return [(base, base + (type_size(name, named) or 0))]
        return []
    ty = named.get(name, name).strip()
    out = []
    if ty.startswith(("{", "<{")):
        for f, pos in struct_fields(ty, named):
            out += hiding_unions(f, named, base + pos, limit)
    elif ty.startswith("[") and " x " in ty:
        n, elem = ty[1:-1].split(" x ", 1)
        size = type_size(elem.strip(), named)
        first = hiding_unions(elem, named, 0, limit) if size else []
        out += [(base + k * size + a, base + k * size + b)
                for k in range(min(int(n), limit)) for a, b in first]
    return out


# a named type: quoted (C++'s `%"class.std::vector"`) or not
_NAMED_TYPE = re.compile(r'%"[^"]*"|%[-\w.$]+(?![-\w.$])')


def _with_unions(ty: str, named) -> str:
    """ty with every named type but unions expanded (so the unions it holds are named). Quoted
    names (C++'s) stay as they are: std::string's small-buffer union would hide floats."""
    for _ in range(4):
        new = re.sub(r"%[-\w.$\"]+(?!\w)", lambda m: named.get(m.group(0), m.group(0))
                     if m.group(0) in named and "union." not in m.group(0) else m.group(0), ty)
        if new == ty:
            break
        ty = new
    return ty


def class_types(module, cls: str, unions: bool = False) -> list:
    """The module's IR type names of C++ class `cls` (`std::unique_ptr<Term>`: template
    arguments dropped, since clang names every instance of a template alike, numbered)."""
    name = re.sub(r"<.*>", "", cls).strip()
    if not re.fullmatch(r"[A-Za-z_][\w:]*", name):
        return []
    kinds = "struct|class|union" if unions else "struct|class"
    want = re.compile(r'^%"?(?:' + kinds + r')\.' + re.escape(name) + r'(?:\.\d+)?"?$')
    return [n for n in module.named_types if want.match(n)]


def named_expand(ty: str, named, keep_names: bool = False) -> str:
    """A type's text with named struct types replaced by their bodies (a few levels); with
    keep_names each body is preceded by its name (to see e.g. `%union.`)."""
    for _ in range(4):
        new = re.sub(_NAMED_TYPE, lambda m: (m.group(0)[1:] + " " if keep_names else "")
                     + named.get(m.group(0), m.group(0)) if m.group(0) in named else m.group(0), ty)
        if new == ty:
            break
        ty = new
    return ty


def named_align(inst) -> int | None:
    """The `align N` an instruction names (its last one), else None."""
    toks = inst.toks
    for k in range(len(toks) - 1, 0, -1):
        if toks[k - 1] == "align" and toks[k].isdigit():
            return int(toks[k])
    return None


def alloca_align(inst) -> int:
    """The alignment an alloca asks for (1 when it names none)."""
    return named_align(inst) or 1


# flang's array descriptor (fortran_desc.h's Desc): base, elem_len, version, rank, type,
# attribute (1 POINTER, 2 ALLOCATABLE), extra, then `rank` dims of (lower, extent, stride)
def field_offsets(body: str, named) -> list[tuple[str, int]]:
    """(field type, byte offset) of a literal struct type's fields (unpacked: aligned)."""
    out, pos = [], 0
    for f in split_fields(body):
        a = type_align(f, named)
        pos = (pos + a - 1) // a * a
        out.append((f, pos))
        pos += type_size(f, named)
    return out


def element_slot(module, fn, v: str):
    """("element", T, offset) for pointer v at a constant offset into an element of an array of
    struct type T indexed at run time (Fortran's `chunk%tiles(t)%field%b`: the descriptor base
    of a component, reloaded wherever it is used): the same field of every element holds the
    same kind of pointer. None otherwise (not into a union)."""
    off, d = 0, fn.defs.get(v)
    for _ in range(16):
        if getattr(d, "op", None) != "getelementptr":
            return None
        step = gep_offset(module, d)
        if step is not None:
            off += step
            d = fn.defs.get(d.ops[0].value)
            continue
        ty, named = d.src_ty, module.named_types
        if not ty.startswith("%") or ty.startswith("%union.") or len(d.ops) < 2 or \
                d.ops[1].value.lstrip("-").isdigit():
            return None
        for o in d.ops[2:]:             # constant field indices after the run-time one
            step = gep_step(ty, int(o.value), named) if o.value.isdigit() else None
            if step is None:
                return None
            ty, pos, _ = step
            off += pos
        size = type_size(d.src_ty, named)
        return ("element", d.src_ty, off) if size and 0 <= off < size else None
    return None
