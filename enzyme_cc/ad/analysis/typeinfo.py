"""Type analysis, the part synthesis needs (seeds/001 Figure 2): what kind of data lies at a byte
offset of the memory a pointer points into, so that untyped copies (memcpy, and the i64/i32
load/store pairs LLVM makes of small memcpys) get the right adjoint. The facts of types and
declarations are type_layout.py's; the ranges a memcpy moves, copy_types.py's.

Evidence, strongest first: TBAA tags (`!tbaa`, `!tbaa.struct`), typed loads and stores and GEP
source types on the same underlying object and offset, the allocated type of allocas and
globals, and hints from the caller for pointer arguments. Kinds: 'double', 'float', 'ptr',
'int'; None when nothing is known.
"""
from __future__ import annotations

import re

from enzyme_cc.ir.lexer import type_size, vector_shape

from ..structure.type_layout import (FLOATS, declared_kind, decompose, global_type, layout,
                                     same_memory, scalar_kind, tbaa_is_field, tbaa_kind, tbaa_name,
                                     tbaa_pointee, tbaa_field, underlying, unions_hide, containing_type,
                                     record_of, hiding_unions, opaque_layout)
from ..structure.fortran_descriptors import loaded_data_kind
from ..structure.unionfind import UnionFind
from ..structure.address_residue import pointer_residue
from ..structure.tbaa_records import record_kind
from ..structure.call_targets import address_taken
from .activity_basics import ALLOCATORS
from .cxx_signatures import declared_pointees, declared_records, returned_record

# Enzyme's type annotation calls: `__enzyme_double(p)` says p points to doubles (type analysis
# evidence, like a typed access); the calls are removed after differentiation (markers.py)
TYPE_HINT = re.compile(r'@"?__enzyme_(double|float|integer|pointer)"?$')


class TypeInfo:
    """Per function: offset -> kind evidence for each underlying object."""

    def __init__(self, module, fn, hints: dict | None = None):
        self.module, self.fn = module, fn
        # param name -> {offset: kind} or {'*': kind}: the callers', else the C++ declaration's
        self.hints = {**declared_pointees(module, fn), **{p: h for p, h in (hints or {}).items()
                                                         if h}}
        self.facts: dict[str, dict] = {}
        self.uniform: dict[str, set] = {}
        self.int_pointees: set = set()      # pointer classes whose C type is `int *` (TBAA)
        self.int_accessed: set = set()      # objects accessed with a C integer type's TBAA tag
        self.float_accesses: dict[str, dict] = {}   # object -> {offset: kind} of float-typed IR accesses
        self.strided_floats: dict[str, set] = {}    # object -> {(c, g, kind)}: at c + k*g
        self.pointer_accesses: dict[str, set] = {}  # object -> offsets of pointer accesses
        self.strided_pointers: dict[str, set] = {}  # object -> {(c, g, 'ptr')}: at c + k*g
        self.chars: dict[str, set] = {}     # object -> offsets accessed as characters
        self.records: dict[str, set] = {}   # pointer class -> struct types GEPs index it by
        self._record_views: dict[str, dict] = {}     # memo of _record_view
        self._layouts: dict = {}            # IR type -> (size, layout) or None (opaque)
        # pointers joined by phi/select (or realloc) denote the same memory for typing purposes
        self._classes = UnionFind()
        self._find, self._union = self._classes.find, self._classes.union
        for a, b in _typing_joins(fn):
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
        counts: list = []                     # addresses small integer constants are stored to
        for inst in fn.insts():
            if inst.op == "load":
                self._note(inst.ops[0].value, inst.ty, inst.md.get("!tbaa"))
                if inst.ty == "ptr":
                    self._pointee(inst.name, inst.md.get("!tbaa"))
                    self._char_pointer(inst.name, inst.md.get("!tbaa"), inst.ops[0].value)
            elif inst.op == "store":
                self._note(inst.ops[1].value, inst.ops[0].ty, inst.md.get("!tbaa"))
                if inst.ops[0].ty in ("i32", "i64") and _small_nonzero(inst.ops[0].value):
                    counts.append(inst.ops[1].value)
                if inst.ops[0].ty == "ptr" and inst.ops[0].value.startswith("%"):
                    self._pointee(underlying(fn, inst.ops[0].value), inst.md.get("!tbaa"))
                    self._char_pointer(inst.ops[0].value, inst.md.get("!tbaa"), inst.ops[1].value)
            elif inst.op == "call" and TYPE_HINT.match(inst.callee or "") and inst.ops:
                self._hint(inst.ops[0].value, TYPE_HINT.match(inst.callee).group(1))
            elif inst.op == "call" and _blank_fill(inst):
                # flang pads a CHARACTER variable with blanks (C's `memset(s, ' ', n)` too)
                self._note_scalar(*decompose(module, fn, inst.ops[0].value), "i8", None)
            elif inst.op == "getelementptr" and inst.src_ty not in ("i8",):
                b = self._find(underlying(fn, inst.ops[0].value))
                for k in set(layout(inst.src_ty, named).values()) - {"int"}:
                    self.uniform.setdefault(b, set()).add(k)
                if inst.src_ty.strip().startswith("%"):     # it points at records of a struct type
                    self.records.setdefault(b, set()).add(inst.src_ty.strip())
            elif inst.op == "alloca" and inst.src_ty not in ("i8",) and "x i8 ]" not in inst.src_ty \
                    and not unions_hide(inst.src_ty, named):
                lay = layout(inst.src_ty, named)
                # (a C++ union's bytes say nothing: std::function's storage, two i64s)
                spans = hiding_unions(inst.src_ty, named)
                declared[inst.name] = {o: k for o, k in lay.items()
                                       if not any(a <= o < b for a, b in spans)}
        for p, ty in declared_records(module, fn).items():   # `Osc*` in the C++ signature
            self.records.setdefault(self._find(p), set()).add(ty)
        for inst in fn.insts():             # `v[i]`, `*it` of a std::vector<Osc>, as calls
            if inst.op in ("call", "invoke") and inst.ty == "ptr" and inst.name and \
                    (ty := returned_record(module, inst.callee or "")):
                self.records.setdefault(self._find(inst.name), set()).add(ty)
        for inst in fn.insts():
            # a local a callee fills (rustc returns a struct through a `writeonly` pointer):
            # the callee's typed stores into it, where this function's own accesses say nothing
            if inst.op in ("call", "invoke") and module.defines(inst.callee or ""):
                for j, o in enumerate(inst.ops):
                    filled = filled_facts(module, inst.callee, j) \
                        if o.ty == "ptr" and o.value.startswith("%") else None
                    if not filled:
                        continue                  # (memoized: the common case costs nothing)
                    base, off = decompose(module, fn, o.value)
                    if off == 0 and getattr(fn.defs.get(base), "op", None) == "alloca":
                        mine = self.facts.setdefault(base, {})
                        for at, kind in filled.items():
                            mine.setdefault(at, kind)
        for obj, lay in declared.items():     # typed accesses win over the declared type
            self.facts[obj] = {**lay, **self.facts.get(obj, {})}
        # a word set to a small nonzero integer constant holds an integer (a reference count,
        # a length: Rust's Rc header before its f64 value), where nothing typed says otherwise:
        # the bits of a float other than zero are never below 2^32
        for ptr in counts:
            base, off = decompose(module, fn, ptr)
            if off is not None:
                self.facts.setdefault(base, {}).setdefault(off, "int")

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
        if kind == "int":
            self.int_pointees.add(self._find(ptr))
        elif kind:
            self.uniform.setdefault(self._find(ptr), set()).add(kind)

    def int_pointee(self, ptr) -> bool:
        """ptr is a pointer the program declares as pointing to integers (`int *`, `long *`:
        a pointer TBAA tag where it is loaded or stored)."""
        return self._find(underlying(self.fn, ptr)) in self.int_pointees

    def int_class(self, ptr) -> bool:
        """The memory ptr points into is accessed as a C integer type (an `int`, `long` TBAA
        tag: the program's own type, never a float's bits moved as an integer) and never as a
        float or a pointer, through any pointer of its class (std::vector<int>'s buffer, whose
        elements are stored through its end pointer at a run-time offset)."""
        root = self._find(underlying(self.fn, ptr))
        return not self.uniform.get(root) and \
            any(self._find(b) == root for b in self.int_accessed)

    def _char_pointer(self, ptr, tag, slot):
        """A `char *` (TBAA "p1 omnipotent char", e.g. a std::string's buffer) kept in memory
        (`slot`) points at character data; not one a local variable keeps (unoptimized code's
        spill of `char *buf`: C's byte buffers, a message packed with doubles, are `char *`
        too, and optimized code keeps no such slot)."""
        if getattr(self.fn.defs.get(slot), "op", None) == "alloca" or \
                tbaa_is_field(self.module, tag) and "basic_string" not in \
                self.module.metadata.get((tbaa_field(self.module, tag) or ("",))[0], ""):
            return              # (a record's `char *` field: a string's, or a message buffer)
        if tbaa_name(self.module, tag) == "p1 omnipotent char":
            base, off = decompose(self.module, self.fn, ptr)
            self.chars.setdefault(base, set()).add(off)
            if off is None:         # (into an element at a run-time index: noted on ptr itself)
                self.chars.setdefault(ptr, set()).add(0)

    def _note(self, ptr, ty, tag):
        base, off = decompose(self.module, self.fn, ptr)
        if off is None:
            self._note_strided(ptr, ty)
        vec = vector_shape(ty)
        if vec and scalar_kind(vec[1]) in (*FLOATS, "ptr"):
            # a vector access (SIMD code's packets; their TBAA tag is mostly char): its lanes
            n, el = vec
            size = type_size(el, self.module.named_types)
            for k in range(n):
                self._note_scalar(base, None if off is None else off + k * size, el, None)
            return
        self._note_scalar(base, off, ty, tag)

    def _note_strided(self, ptr, ty):
        """A float or a pointer accessed at a run-time offset: the offsets c + k*g it may lie
        at in its object (address_residue.py), where each is one whole value (g a multiple of
        its size: `buf[i]` of a `double *`, `recs[i].r` of records)."""
        vec = vector_shape(ty)
        n, el = vec if vec else (1, ty)
        kind = scalar_kind(el)
        if kind not in (*FLOATS, "ptr"):
            return
        base, c, g = pointer_residue(self.module, self.fn, ptr)
        size = type_size(el, self.module.named_types)
        if g and g % size == 0:
            into = self.strided_floats if kind in FLOATS else self.strided_pointers
            into.setdefault(base, set()).update((c + j * size, g, kind) for j in range(n))

    def _note_scalar(self, base, off, ty, tag):
        if ty.strip() in ("i8", "[1 x i8]") or (scalar_kind(ty) == "int" and
                                                tbaa_name(self.module, tag) == "omnipotent char"):
            self.chars.setdefault(base, set()).add(off)       # a character access
            if off is None and _byte_array(self.fn, base):
                # (a character at a run-time index of a local byte array: flang's CHARACTER
                # variable padded with blanks, `buf[i] = c` in C): it holds characters
                self.chars[base].add(0)
        if off is not None and scalar_kind(ty) in FLOATS:
            self.float_accesses.setdefault(base, {}).setdefault(off, scalar_kind(ty))
        elif off is not None and scalar_kind(ty) == "ptr":
            self.pointer_accesses.setdefault(base, set()).add(off)
        kind = tbaa_kind(self.module, tag) or (scalar_kind(ty) if scalar_kind(ty) != "int" else None)
        if kind is None:
            return
        if off is not None:
            self.facts.setdefault(base, {}).setdefault(off, kind)
        if kind == "int" and tag:
            self.int_accessed.add(base)
        if kind != "int" and (off is None or off >= 0):
            # (an access before the base is no evidence of what the base points to: Eigen's
            # hand-aligned block keeps malloc's pointer just before its first element)
            self.uniform.setdefault(self._find(base), set()).add(kind)

    def _global(self, base):
        cache = self.module.__dict__.setdefault("_global_layouts", {})   # (per module: a round)
        if base not in cache:
            ty = global_type(self.module, base)
            # (a byte array, `static char buf[n]`, says nothing of what is kept in it)
            cache[base] = layout(ty, self.module.named_types) \
                if ty and not opaque_layout(ty, self.module.named_types) else {}
        return cache[base]

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
        record = self._record_view(ptr)
        if 0 in record:
            # an element of an array of records of a struct type with a float field (a Rust
            # Vec<Particle> indexed by a variable): the field's declared kind, not the kind the
            # array's other fields make it hold; an integer field is left to the declaration
            # checks of the caller (content_kind), which also see float bits kept in integers
            return record[0] if record[0] != "int" else None
        if off is not None and base.startswith("@") and not self._global(base) and \
                self._integer_stretch(base, off, facts):
            return "int"
        kinds = set(facts.values()) - {"int"} | self.uniform.get(self._find(base), set())
        if "*" in facts:
            kinds.add(facts["*"])
        return kinds.pop() if len(kinds) == 1 else None

    def _integer_stretch(self, base: str, off: int, facts: dict) -> bool:
        """Offset off of a byte-array global (a FORTRAN COMMON block: flang declares it
        `[N x i8]`) lies among its integers: the nearest access at a known offset at or
        before it is an integer's, no float access at a known offset lies between that one
        and 8 bytes past off, and no array of floats indexed at run time reaches there. The floats the block
        holds elsewhere say nothing of it (ODEPACK's /DLS001/ keeps 218 doubles, then 37
        integers: its counters were taken for pieces of doubles)."""
        known = [o for o in facts if isinstance(o, int) and o <= off]
        if not known or facts[max(known)] != "int":
            return False
        start, end = max(known), off + 8
        floats = {o for o, k in facts.items() if isinstance(o, int) and k in FLOATS} | \
            set(self.float_accesses.get(base, {}))
        if any(start <= o < end for o in floats):
            return False
        # an array of floats indexed at run time runs from its start to the next integer
        ints = sorted(o for o, k in facts.items() if isinstance(o, int) and k == "int")
        for c, _, _ in self.strided_floats.get(base, ()):
            stop = next((o for o in ints if o > c), None)
            if c < end and (stop is None or stop > start):
                return False
        return True

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
        if k in FLOATS and size and size < (8 if k == "double" else 4):
            # a piece narrower than the float the memory's other accesses suggest: the
            # declared type of those bytes, where it names one (a char array beside a double
            # member is characters, not a double copied byte by byte)
            # (or the record a struct-path tag through the same base places there: a char
            # array member beside a double member of a C++ class, copied into a std::string)
            k = declared_kind(self.module, self.fn, ptr, size, self) or \
                record_kind(self.module, self.fn, ptr, size) or k
        if k is None and size:
            k = declared_kind(self.module, self.fn, ptr, size, self)
        if k is None and size:          # inside a C++ record other accesses' tags place there
            k = record_kind(self.module, self.fn, ptr, size)
        return k

    def char_data(self, ptr: str, length) -> bool:
        """The bytes [ptr, ptr+length) are characters: accessed as bytes or char-tagged
        integers at ptr, or pointed to by a char pointer, and nothing typed there is a float or
        a pointer."""
        base, off = decompose(self.module, self.fn, ptr)
        if off is None:             # a char pointer's own target (_char_pointer)
            base, off = ptr, 0
        if off not in self.chars.get(base, ()):
            return False
        facts = self.facts.get(base, {})
        end = off + length if length is not None else None
        hint = self.hints.get(base) or self.class_hints.get(self._find(base), {})
        if hint.get("*") in FLOATS and off == 0 or hint.get(off) in FLOATS:
            return False        # (a `char *` parameter the caller hands floats: a byte buffer)
        return not any(k != "int" and o >= off and (end is None or o < end)
                       for o, k in facts.items() if o != "*")

    def pointee_summary(self, ptr: str) -> dict:
        """Evidence about the memory ptr points to, as a hint for a callee's parameter."""
        base, off = decompose(self.module, self.fn, ptr)
        if off is None and any(len(set(layout(t, self.module.named_types).values())) > 1
                               for t in self.records.get(self._find(base), ())):
            # a run-time offset into records of mixed fields (a vector<pair<long, float>>'s
            # end): neither the base's offsets nor "all floats" hold there
            return {}
        facts = dict(self._global(base)) if base.startswith("@") else {}
        facts.update(self.hints.get(base) or self.class_hints.get(self._find(base), {}))
        facts.update(self.facts.get(base, {}))
        if off:
            facts = {o - off: k for o, k in facts.items() if o != "*" and o >= off}
        # (what lies before ptr says nothing of what it points to: see _note_scalar)
        kinds = ({k for o, k in facts.items() if o == "*" or o >= 0} - {"int"}) | \
            self.uniform.get(self._find(base), set())
        record = self._record_view(ptr)
        if record:
            # a pointer into records whose type has floats and other fields (a hash table's
            # `(usize, f64)` buckets): the record says which bytes are which, where the memory
            # as a whole only says "holds doubles"
            for o, k in record.items():
                facts.setdefault(o, k)
            kinds &= set(record.values())
        if len(kinds) == 1 and not (record and len(set(record.values())) > 1):
            facts["*"] = next(iter(kinds))
        if not facts and off is not None:
            # nothing here accesses it: a Fortran array's base address read from a descriptor
            # declares the data (CloverLeaf's fields handed to a kernel that only copies them)
            declared = loaded_data_kind(self.module, self.fn, base)
            if declared:
                facts["*"] = declared
        return facts

    def call_hint(self, ptr: str, callee, param: str) -> dict:
        """pointee_summary as the hint for the parameter `param` of the function `callee`;
        where neither this function nor the callee types the memory, the one float kind the
        other callees it is handed to access it as (a message buffer filled by one routine and
        copied by another as `char *`: the copy moves floats)."""
        summary = self.pointee_summary(ptr)
        if summary or not ptr.startswith("%"):
            return summary
        own = _info(self.module, callee)
        if own.facts.get(param) or own.uniform.get(own._find(param)):
            return summary
        kinds = callee_kinds(self.module, self.fn, {self._find(underlying(self.fn, ptr))}, self)
        return {"*": next(iter(kinds))} if len(kinds) == 1 and kinds <= FLOATS else {}

    def handed(self) -> dict:
        """{class: {(callee with bitcode, argument index)}}: where the function passes the
        objects of each class (built once)."""
        if "_handed" not in self.__dict__:
            self._handed = {}
            for inst in self.fn.insts():
                if inst.op in ("call", "invoke") and (inst.callee or "").startswith("@") and \
                        self.module.defines(inst.callee):
                    for j, o in enumerate(inst.ops):
                        if o.ty == "ptr" and o.value.startswith("%"):
                            self._handed.setdefault(self._find(underlying(self.fn, o.value)),
                                                    set()).add((inst.callee, j))
        return self._handed

    def _record_view(self, ptr: str) -> dict:
        """{byte offset from ptr: kind} over the rest of the record ptr points into and the
        next one, when ptr points into records of a struct type with a float field (from a
        typed GEP, an alloca or a global); empty otherwise."""
        if ptr not in self._record_views:
            self._record_views[ptr] = self._record_view_of(ptr)
        return self._record_views[ptr]

    def _record_view_of(self, ptr: str) -> dict:
        ty, off = containing_type(self.module, self.fn, ptr)
        if not ty:
            ty, off = record_of(self.module, self.fn, self, ptr)
        named = self.module.named_types
        if not ty or off is None:
            return {}
        layouts = self._layouts
        if ty not in layouts:
            try:
                layouts[ty] = type_size(ty, named), layout(ty, named)
            except ValueError:          # (an opaque struct, MPI's handles: no size, no fields)
                layouts[ty] = None
        if layouts[ty] is None:
            return {}
        size, lay = layouts[ty]
        if not size:
            return {}
        if not set(lay.values()) & FLOATS or len(lay) > 256:
            return {}
        off %= size
        return {o - off + r * size: k for r in (0, 1) for o, k in lay.items()
                if 0 <= o - off + r * size < 2 * size - off}


def param_kinds(module, name: str, k: int, depth: int = 3) -> set:
    """The kinds (double, float, ptr) the function `name` accesses its pointer parameter k's
    memory as: its typed accesses through it, and what the functions it passes the parameter to
    access it as, `depth` calls deep (memoized on the module). The memory a C routine copies
    only to hand it to a Fortran routine is typed there, not in the C code."""
    memo = module.__dict__.setdefault("_param_kinds", {})
    key = (name, k, depth)
    if key in memo:
        return memo[key]
    memo[key] = set()                          # (recursion: nothing known yet)
    fn = module.function(name)
    if fn is None or k >= len(fn.params) or fn.params[k].ty != "ptr":
        return memo[key]
    info = TypeInfo(module, fn)
    base = info._find(fn.params[k].name)
    kinds = set(info.facts.get(fn.params[k].name, {}).values()) | info.uniform.get(base, set())
    if depth > 1:
        kinds |= callee_kinds(module, fn, {base}, info, depth - 1)
    memo[key] = kinds - {"int"}
    return memo[key]


def filled_facts(module, name: str, k: int) -> dict:
    """{offset: kind} of the typed accesses of the function `name` through its pointer
    parameter k where the parameter is `writeonly`: the function fills that memory (memoized on
    the module)."""
    memo = module.__dict__.setdefault("_filled_facts", {})
    if (name, k) not in memo:
        memo[(name, k)] = {}                    # (recursion: nothing known yet)
        fn = module.function(name)
        if fn is not None and k < len(fn.params) and fn.params[k].ty == "ptr" and \
                "writeonly" in fn.params[k].attrs:
            facts = TypeInfo(module, fn).facts.get(fn.params[k].name, {})
            memo[(name, k)] = {o: kind for o, kind in facts.items() if isinstance(o, int)}
    return memo[(name, k)]


def slot_kinds(module, name: str, k: int, off, depth: int = 6) -> set:
    """The float kinds the function `name` reaches through the pointers it reads from its
    pointer parameter k's memory at byte offset off (any offset where None): accesses through
    them, through the pointers read from their memory or stored into local records in turn, and
    in the functions they are handed to, `depth` levels deep (memoized on the module). An
    expression object holding a matrix's address, whose evaluator reads the matrix's data
    pointer into a mapper record for a kernel that loads the doubles (Eigen)."""
    fn = module.function(name)
    if fn is None or k >= len(fn.params) or fn.params[k].ty != "ptr" or depth <= 0:
        return set()
    return _slot(module, fn, fn.params[k].name, off, depth)


def reached_slot_kinds(module, fn, obj: str, off: int, depth: int = 6) -> set:
    """slot_kinds for a local record obj of fn at offset off."""
    return _slot(module, fn, obj, off, depth)


def _pointer(module, fn, v: str, depth: int) -> set:
    """Float kinds reached through pointer v of fn (see slot_kinds)."""
    key = ("p", fn.name, v, depth)
    memo = module.__dict__.setdefault("_reached_kinds", {})
    if key in memo:
        return memo[key]
    memo[key] = set()                           # (recursion: nothing known yet)
    info = _info(module, fn)
    kinds = (set(info.pointee_summary(v).values()) |
             callee_kinds(module, fn, {info._find(v)}, info, min(depth, 3))) & FLOATS
    if not kinds and depth > 1:
        kinds |= _slot(module, fn, v, None, depth - 1)
        for inst in fn.insts():
            if kinds:
                break
            if inst.op == "store" and inst.ops[0].ty == "ptr" and \
                    _into(module, fn, info, inst.ops[0].value, v) is not None:
                obj, at = decompose(module, fn, inst.ops[1].value)
                if at is not None and getattr(fn.defs.get(obj), "op", None) == "alloca":
                    kinds |= _slot(module, fn, obj, at, depth - 1)
            elif inst.op in ("call", "invoke") and module.defines(inst.callee or ""):
                for j, o in enumerate(inst.ops):
                    if o.ty == "ptr" and _into(module, fn, info, o.value, v) is not None:
                        callee = module.function(inst.callee)
                        if callee is not None and j < len(callee.params):
                            kinds |= _pointer(module, callee, callee.params[j].name, depth - 1)
    memo[key] = kinds
    return kinds


def _slot(module, fn, base: str, off, depth: int) -> set:
    """Float kinds reached through the pointers fn reads from base's memory at offset off (any
    where None), there or in the functions it hands that memory to (see slot_kinds)."""
    key = ("s", fn.name, base, off, depth)
    memo = module.__dict__.setdefault("_reached_kinds", {})
    if key in memo:
        return memo[key]
    memo[key] = set()
    info, kinds = _info(module, fn), set()
    for inst in fn.insts():
        if kinds:
            break
        if inst.op == "load" and inst.ty == "ptr" and inst.name:
            at = _into(module, fn, info, inst.ops[0].value, base)
            if at is not None and (off is None or at == off):
                kinds |= _pointer(module, fn, inst.name, depth)
        elif inst.op in ("call", "invoke") and depth > 1 and inst.callee:
            for j, o in enumerate(inst.ops):
                at = _into(module, fn, info, o.value, base) if o.ty == "ptr" else None
                if at is not None and (off is None or at <= off):
                    for callee in call_targets(module, inst):
                        kinds |= slot_kinds(module, callee, j,
                                            None if off is None else off - at, depth - 1)
    memo[key] = kinds
    return kinds


MAX_TARGETS = 16        # an indirect call with more possible targets is not followed


def call_targets(module, inst) -> list[str]:
    """The functions with bitcode a call may reach: its callee, or an indirect call's possible
    targets (a std::function's invoker: the lambdas of its signature), when there are few."""
    if inst.callee.startswith("%"):
        out = address_taken(module, inst.ty, [o.ty for o in inst.ops])
        return out if len(out) <= MAX_TARGETS else []
    return [inst.callee] if module.defines(inst.callee) else []


def _info(module, fn) -> "TypeInfo":
    memo = module.__dict__.setdefault("_typeinfo_of", {})
    if fn.name not in memo:
        memo[fn.name] = TypeInfo(module, fn)
    return memo[fn.name]


def _into(module, fn, info, ptr: str, base: str):
    """ptr's constant offset into the memory of base (or a pointer joined with it), else None."""
    b, at = decompose(module, fn, ptr)
    return at if at is not None and (b == base or info._find(b) == info._find(base)) else None


def callee_kinds(module, fn, bases, info, depth: int = 3) -> set:
    """The kinds the callees with bitcode of fn access the objects of `bases` (TypeInfo classes
    of fn) as, through the arguments fn passes them (param_kinds)."""
    kinds = set()
    for b in bases:
        for callee, j in info.handed().get(b, ()):   # (info is fn's: the same names)
            kinds |= param_kinds(module, callee, j, depth)
    return kinds


def _typing_joins(fn):
    """same_memory's pairs, but a phi/select choosing between distinct allocations (a local
    array and a heap block: `c ? loc[i].x : buf[i]`) is not joined with them: each object keeps
    its own layout, where joining them would lay one's fields over the other's (a double of the
    heap block taken for the int of the local record at the same offset)."""
    pairs = list(same_memory(fn))
    roots: dict = {}
    for a, b in pairs:
        d = fn.defs.get(b)
        if getattr(d, "op", None) == "alloca" or getattr(d, "op", None) in ("call", "invoke") \
                and d.ty == "ptr" and d.callee in ALLOCATORS:
            roots.setdefault(a, set()).add(b)
    split = {a for a, rs in roots.items() if len(rs) > 1 and
             getattr(fn.defs.get(a), "op", None) in ("phi", "select")}
    return [(a, b) for a, b in pairs if a not in split]


def _small_nonzero(v: str) -> bool:
    try:
        return 0 < abs(int(v)) < 1 << 32
    except ValueError:
        return False


def _byte_array(fn, base) -> bool:
    """base is a local array of bytes (`alloca [N x i8]`)."""
    d = fn.defs.get(base)
    return getattr(d, "op", None) == "alloca" and \
        re.fullmatch(r"\[ ?\d+ x i8 ?\]", (d.src_ty or "").strip()) is not None


def _blank_fill(inst) -> bool:
    """A memset of blanks (the character ' ')."""
    return (inst.callee or "").startswith(("@llvm.memset", "@memset")) and len(inst.ops) > 1 \
        and inst.ops[1].value == "32"
