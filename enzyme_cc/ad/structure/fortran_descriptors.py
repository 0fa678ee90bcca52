"""Flang's array descriptors in Fortran module variables: which globals are descriptors (an
ALLOCATABLE or POINTER array, of intrinsic or derived-type data) or hold them (allocatable
components of a derived type, at any depth), their ranks and offsets, and what the program
does with them (`fortran_descriptor`: allocated only, or associated with other data too),
which decides the shadow a module variable gets (ad/api/shared_globals.py)."""
from __future__ import annotations

import re

from enzyme_cc.ir.lexer import split_fields, type_size
from .type_layout import (decompose, element_slot, field_offsets, global_type, named_expand,
                          underlying)

_DESC_HEAD = ["ptr", "i64", "i32", "i8", "i8", "i8", "i8"]
_DIMS = re.compile(r"^\[\s*(\d+)\s*x\s*\[\s*3\s*x\s*i64\s*\]\s*\]$")


def flang_descriptor_rank(g: str, ty, addendum: bool = False) -> int | None:
    """The rank of a Fortran module variable's descriptor (a global flang names `_Q...` whose
    type is a descriptor's: an ALLOCATABLE or POINTER), or None. addendum: also a descriptor
    of derived-type data (its type description and length parameters after the dimensions)."""
    if not ty or not g.lstrip("@").strip('"').startswith("_Q"):
        return None
    body = ty.strip()
    if not body.startswith("{"):
        return None
    fields = [f.strip() for f in split_fields(body)]
    cut = {9: -1, 10: -2}.get(len(fields)) if addendum else None    # (type info, len params)
    if cut and fields[cut] == "ptr":
        fields = fields[:cut]
    if [f.replace(" ", "") for f in fields[:7]] != _DESC_HEAD or len(fields) > 8:
        return None
    if len(fields) == 7:
        return 0
    m = _DIMS.match(fields[7])
    return int(m.group(1)) if m else None


# the flags at the end of flang's derived-type description: hasParent, noInitializationNeeded,
# noDestructionNeeded (no allocatable or automatic components), noFinalizationNeeded, ...
_TYPE_FLAGS = re.compile(r"i32 -?\d+, i8 [01], i8 [01], i8 ([01]), i8 [01], i8 [01], \[3 x i8\]"
                         r"[^{}]*\}\s*(?:,|$)")


def plain_derived_elements(module, g: str) -> bool:
    """Module array g is of a derived type whose values hold no pointers (no allocatable or
    automatic components, by the type description flang names in g's descriptor): a zeroed
    buffer is its elements' shadow."""
    ty = global_type(module, g)
    if flang_descriptor_rank(g, ty and named_expand(ty, module.named_types), addendum=True) is None:
        return False
    m = re.search(r"ptr (@_Q\w*EXdtX\w+)", module.globals.get(g, ""))
    info = module.globals.get(m.group(1), "") if m else ""
    flags = _TYPE_FLAGS.findall(info)
    return len(flags) == 1 and flags[0] == "1"


def flang_descriptor_fields(module, g: str) -> list[tuple[int, int]]:
    """(byte offset, rank) of each array descriptor of intrinsic data in a Fortran module
    variable g: g itself (an ALLOCATABLE or POINTER array, also of a derived type of plain
    values), or the allocatable components of a derived type's. (Descriptors of derived-type
    data with pointers inside: flang_descriptor_trees.)"""
    return _descriptor_layout(module, g)[0]


def flang_descriptor_trees(module, g: str) -> list[tuple[int, int]]:
    """(byte offset, bytes) of each descriptor of derived-type data in a Fortran module variable
    g whose elements may hold allocatable components (TeaLeaf's `chunk%tiles(:)`, CloverLeaf's
    `chunks(:)`): g itself, or components of g. Their shadows are trees of buffers
    (rules/fortran_shadow.c)."""
    return _descriptor_layout(module, g)[1]


def _descriptor_layout(module, g: str) -> tuple[list, list]:
    """(flang_descriptor_fields, flang_descriptor_trees) of g, found once per module."""
    memo = module.__dict__.setdefault("_descriptor_layouts", {})
    if g not in memo:
        ty = global_type(module, g) if g.lstrip("@").strip('"').startswith("_Q") else None
        memo[g] = _layout_of(module, g, ty) if ty else ([], [])
    return memo[g]


def _layout_of(module, g: str, ty: str) -> tuple[list, list]:
    named = module.named_types
    expanded = named_expand(ty, named)
    rank = flang_descriptor_rank(g, expanded, addendum=plain_derived_elements(module, g))
    if rank is not None:                      # g an array of intrinsic or plain derived data
        return [(0, rank)], []
    if flang_descriptor_rank(g, expanded, addendum=True) is not None:
        return [], [(0, type_size(ty, named))]     # g an array of derived data with pointers
    found = _descriptors_in(ty, named, 0)
    return [(at, r) for at, r, _ in found if r is not None], \
        [(at, n) for at, r, n in found if r is None]


def _descriptors_in(ty: str, named, base: int, depth: int = 0) -> list:
    """(offset, rank, bytes) of the descriptors in struct type ty; rank None for a descriptor
    of derived-type data (one with a type-description addendum)."""
    ty = named.get(ty.strip(), ty).strip()
    if depth > 8 or not ty.startswith("{"):
        return []
    expanded = named_expand(ty, named)
    rank = flang_descriptor_rank("@_Q", expanded)
    if rank is not None:
        return [(base, rank, type_size(ty, named))]
    if flang_descriptor_rank("@_Q", expanded, addendum=True) is not None:
        return [(base, None, type_size(ty, named))]
    return [d for f, pos in field_offsets(ty, named)
            for d in _descriptors_in(f, named, base + pos, depth + 1)]


_COPIES = ("@llvm.memcpy", "@llvm.memmove", "@memcpy", "@memmove")


def fortran_descriptor(module, g: str) -> str | None:
    """What a Fortran module variable's descriptor global g holds: "allocatable"; "components"
    (a derived type's, with allocatable components or POINTER ones only ALLOCATE associates);
    "owned" (a
    POINTER only ALLOCATE associates: nothing in the program copies a descriptor into it, as
    `p => x` and NULLIFY do, or stores into its base address anything but a fresh allocation,
    so its target is memory of its own that no other variable's shadow covers); "pointer" (a
    POINTER, or a derived type with a POINTER component, that the program may associate with
    other data); None if g is no descriptor."""
    memo = module.__dict__.setdefault("_fortran_descriptors", {})
    if g not in memo:
        memo[g] = _descriptor_kind(module, g)
    return memo[g]


def has_own_buffer(module, g: str) -> bool:
    """g is a Fortran module variable whose array data only the program allocates (an
    ALLOCATABLE, allocatable components, a POINTER only ALLOCATE associates): its shadow can
    hold a buffer of its own (shared_globals gives it one at each derivative's entry)."""
    return g.startswith("@") and g in module.globals and \
        fortran_descriptor(module, g) in ("allocatable", "components", "owned")


def _descriptor_kind(module, g: str) -> str | None:
    if not g.startswith("@") or module.is_constant_global(g):
        return None
    # the CFI attribute byte of each descriptor in the initializer: 1 POINTER, 2 ALLOCATABLE
    attrs = [attr for _, attr in _DESC_VALUES.findall(module.globals.get(g, ""))]
    if flang_descriptor_rank(g, named_expand(global_type(module, g) or "",
                                             module.named_types)) is None:
        if not flang_descriptor_fields(module, g) and not flang_descriptor_trees(module, g):
            return None
        if "1" not in attrs:
            return "components"
        # a POINTER component: as a POINTER variable, unless only ALLOCATE associates it
        return "pointer" if _associated_elsewhere(module, g) else "components"
    if attrs[:1] == ["2"]:
        return "allocatable"
    return "pointer" if _associated_elsewhere(module, g) else "owned"


# a descriptor's head in an initializer: its CFI type code and attribute (the second and third
# i8)
_DESC_VALUES = re.compile(r"\{\s*ptr [^,]+,\s*i64 [^,]+,\s*i32 [^,]+,\s*i8 [^,]+,\s*i8 (-?\d+),\s*"
                          r"i8 (\d+)")
_DATA_KINDS = {27: "float", 28: "double", 34: "float", 35: "double"}  # real(4/8), complex(4/8)


def descriptor_data_kind(module, g: str, offset: int) -> str | None:
    """"double" or "float" where the descriptor at `offset` in Fortran module variable g (g
    itself, or an allocatable component) describes REAL or COMPLEX data, by the type code its
    initializer holds: the kind of what its base address points to (a copy into a module
    allocatable made from an element loop: NPB's `u(m, i, j, k) = uin(l)`)."""
    at = [o for o, _ in flang_descriptor_fields(module, g)]
    codes = [code for code, _ in _DESC_VALUES.findall(module.globals.get(g, "").split("=", 1)[-1])]
    if offset not in at or len(codes) != len(at):
        return None
    return _DATA_KINDS.get(int(codes[at.index(offset)]))


def _associated_elsewhere(module, g: str) -> bool:
    """Whether the program may point g's POINTER data at memory it does not ALLOCATE: a
    descriptor copied into g (`p => x`, NULLIFY, a derived-type assignment) or a base address
    stored into it that is not a fresh allocation kept only there."""
    word = re.compile(re.escape(g) + r"(?![-\w.$])")
    for f, (lo, hi) in module._bodies.items():
        if not any(word.search(x) for x in module._lines[lo + 1:hi]):
            continue
        fn = module.function(f)
        for inst in fn.insts():
            if inst.op in ("call", "invoke") and (inst.callee or "").startswith(_COPIES):
                if underlying(fn, inst.ops[0].value) == g:
                    return True
            elif inst.op == "store" and inst.ops[0].ty == "ptr" and \
                    underlying(fn, inst.ops[1].value) == g and inst.ops[0].value != "null":
                v = underlying(fn, inst.ops[0].value)
                src = fn.defs.get(v)
                if getattr(src, "op", None) not in ("call", "invoke") or \
                        src.callee not in ("@malloc", "@calloc") or any(
                            i.op == "store" and underlying(fn, i.ops[0].value) == v and
                            underlying(fn, i.ops[1].value) != g for i in fn.insts()):
                    return True           # (the allocation kept elsewhere too: `p => t`)
    return False


# flang's type description of a derived type's components (`_QM<module>EXcX<type>`): per
# component its genre, category, kind, rank, byte offset and, for a derived type, its own
# description (`...EXdtX<type>`)
_COMPONENT = re.compile(
    r"%_QM__fortran_type_infoTcomponent(?:\.\d+)? \{ \{ ptr, i64, i32, i8, i8, i8, i8 \} "
    r"\{ ptr [^,]+, i64 \d+, i32 \d+, i8 \d+, "
    r"i8 \d+, i8 \d+, i8 \d+ \}, i8 (\d+), i8 (\d+), i8 (\d+), i8 (\d+), \[4 x i8\] [^,]+, "
    r"i64 (\d+), %_QM__fortran_type_infoTvalue(?:\.\d+)? \{[^}]*\}, \{ ptr, i64, i32, i8, i8, i8, "
    r"i8, ptr, \[1 x i64\] \} \{ ptr (@[-\w.$]+|null),")
_ALLOCATABLE, _POINTER, _DATA = 3, 2, 1
_REAL, _COMPLEX, _DERIVED_CAT = 2, 3, 6


def component_data_kind(module, struct_type: str, offset: int, depth: int = 0) -> str | None:
    """"double" or "float" where `offset` in a flang derived type (its IR struct type,
    `%_QM<module>T<type>`) is the base address of an ALLOCATABLE or POINTER component of REAL or
    COMPLEX data, by the type's description (CloverLeaf's `chunk%tiles(t)%field%density0`,
    reloaded from a tile indexed at run time, handed to a kernel that only copies it)."""
    m = re.fullmatch(r"%(_Q[\w$]*?)T(\w+?)(?:\.\d+)?", struct_type.strip())
    return _kind_in(module, f"@{m.group(1)}EXcX{m.group(2)}", offset, depth) if m else None


def _components(module, table: str) -> list[tuple]:
    """(genre, category, kind, rank, offset, derived type's description) per component of a
    type description's component table, parsed once per module."""
    memo = module.__dict__.setdefault("_component_tables", {})
    if table not in memo:
        memo[table] = [tuple(int(x) for x in c[:5]) + (c[5],)
                       for c in _COMPONENT.findall(module.globals.get(table, ""))]
    return memo[table]


def _kind_in(module, table: str, offset: int, depth: int) -> str | None:
    before = [c for c in _components(module, table) if c[4] <= offset]
    if not before or depth > 8:
        return None
    genre, category, kind, _, at, derived = max(before, key=lambda c: c[4])
    if genre in (_ALLOCATABLE, _POINTER) and at == offset and category in (_REAL, _COMPLEX):
        return {4: "float", 8: "double"}.get(kind)
    if genre == _DATA and category == _DERIVED_CAT and derived.startswith("@"):
        return _kind_in(module, derived.replace("EXdtX", "EXcX", 1), offset - at, depth + 1)
    return None


def loaded_data_kind(module, fn, v: str) -> str | None:
    """The declared kind of the data v points into where v is (an offset into) a base address
    loaded from a Fortran descriptor: a module variable's (descriptor_data_kind), or a
    component's in an element of an array of derived type (component_data_kind)."""
    d = fn.defs.get(underlying(fn, v))
    if getattr(d, "op", None) != "load":
        return None
    g, off = decompose(module, fn, d.ops[0].value)
    if g.startswith("@") and off is not None:
        return descriptor_data_kind(module, g, off)
    slot = element_slot(module, fn, d.ops[0].value)
    return component_data_kind(module, slot[1], slot[2]) if slot else None
