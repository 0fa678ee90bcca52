"""Types from the debug info, for copies nothing else types: a copy made by one of the standard
library's generic copy routines (Rust's `core::ptr::copy_nonoverlapping::<T>` and kin, which
`Vec`, `VecDeque` and the sorts use to move elements) moves values of the routine's type
parameter `T`, which the debug info of the copy's location names (`copy_nonoverlapping<f64>`,
`templateParams: T = f64`). Unoptimized Rust (cargo's dev profile, which has debug info) keeps
such copies in functions that never access the data typed; this is where they get a type."""
from __future__ import annotations

import re

from enzyme_cc.ir.lexer import type_size

from ..structure.diagnostics import md_field as _field

# Routines of Rust's `core` whose every copy moves values of their one type parameter T
# (free functions of core::ptr / core::intrinsics / core::mem, and the raw-pointer methods)
_RUST_TYPED_COPIES = {"copy", "copy_nonoverlapping", "read", "read_unaligned", "read_volatile",
                      "write", "write_unaligned", "write_volatile", "replace", "swap",
                      "copy_from", "copy_from_nonoverlapping", "copy_to", "copy_to_nonoverlapping"}


def _subprogram(module, loc_id: str | None) -> str | None:
    """The !DISubprogram text of the innermost function a !DILocation lies in."""
    loc = module.metadata.get(loc_id or "", "")
    scope = _field(loc, "scope")
    for _ in range(50):
        node = module.metadata.get(scope or "", "")
        if node.startswith(("!DISubprogram", "distinct !DISubprogram")):
            return node
        if "DILexicalBlock" not in node:
            return None
        scope = _field(node, "scope")
    return None


def _rust_std_root(module, sp: str) -> str | None:
    """The crate (`core`, `alloc`, ...) the subprogram's scope chain (namespaces, the types
    whose methods it is) starts at; None where it is not such a chain."""
    scope = _field(sp, "scope")
    for _ in range(20):
        node = module.metadata.get(scope or "", "")
        if "DINamespace" not in node and "DICompositeType" not in node:
            return None
        root, scope = _field(node, "name"), _field(node, "scope")
        if scope in (None, "null"):
            return (root or "").strip('"') if "DINamespace" in node else None
    return None


def _type_parameter(module, sp: str) -> str | None:
    """The debug-info type of a generic function's one type parameter `T`; None where it has
    none or more than one."""
    params = module.metadata.get(_field(sp, "templateParams") or "", "")
    types = [module.metadata.get(r, "") for r in re.findall(r"![0-9]+", params)]
    if len(types) != 1 or "DITemplateTypeParameter" not in types[0] or \
            _field(types[0], "name") != '"T"':
        return None
    return _field(types[0], "type")


def copied_layout(module, inst) -> tuple[int, dict] | None:
    """(size, {byte offset: kind}) of the values a memcpy/memmove moves, where it lies in a
    typed copy routine and the debug info describes the type; None otherwise."""
    sp = _subprogram(module, inst.md.get("!dbg"))
    if not sp:
        return None
    name = (_field(sp, "name") or "").strip('"')
    if name.split("<", 1)[0] not in _RUST_TYPED_COPIES or _rust_std_root(module, sp) != "core":
        return None
    return _typed(layout(module, _type_parameter(module, sp)))


def _typed(lay):
    """A layout that says something: not zero-sized, and not bytes (`u8`, `[u8; N]`: what
    type-erased code copies any data as, hashbrown's buckets and Rust's swaps among them)."""
    if not lay or not lay[0] or set(lay[1].values()) == {"int"} and len(lay[1]) == lay[0]:
        return None
    return lay


def layout(module, ty: str | None, depth: int = 0) -> tuple[int, dict] | None:
    """(size in bytes, {byte offset: kind}) of a debug-info type, kinds 'double', 'float',
    'ptr', 'int'; None where the type does not say (unions, enums with variants, long double,
    zero-sized or unsized types)."""
    node = module.metadata.get(ty or "", "")
    if depth > 30 or not node:
        return None
    size = int(_field(node, "size") or 0) // 8
    if node.startswith("!DIBasicType"):
        if (_field(node, "encoding") or "") == "DW_ATE_float":
            kind = {8: "double", 4: "float"}.get(size)
            return (size, {0: kind}) if kind else None
        return (size, {0: "int"}) if size else None
    if node.startswith("!DIDerivedType"):
        tag = _field(node, "tag") or ""
        if tag in ("DW_TAG_pointer_type", "DW_TAG_reference_type",
                   "DW_TAG_rvalue_reference_type"):
            return (size or 8, {0: "ptr"})
        if tag in ("DW_TAG_typedef", "DW_TAG_const_type", "DW_TAG_volatile_type",
                   "DW_TAG_restrict_type", "DW_TAG_atomic_type"):
            return layout(module, _field(node, "baseType"), depth + 1)
        return None
    if not node.startswith(("!DICompositeType", "distinct !DICompositeType")):
        return None
    tag = _field(node, "tag")
    if tag == "DW_TAG_array_type":
        elem = layout(module, _field(node, "baseType"), depth + 1)
        if not elem or not elem[0] or not size or size % elem[0]:
            return None
        esize, lay = elem
        return size, {r + o: k for r in range(0, size, esize) for o, k in lay.items()}
    if tag not in ("DW_TAG_structure_type", "DW_TAG_class_type"):
        return None
    if not size:
        return 0, {}               # a zero-sized field (PhantomData, an allocator marker)
    out = {}
    for ref in re.findall(r"![0-9]+", module.metadata.get(_field(node, "elements") or "", "")):
        member = module.metadata.get(ref, "")
        mtag = _field(member, "tag")
        if "DIFlagStaticMember" in member:
            continue
        if mtag not in ("DW_TAG_member", "DW_TAG_inheritance"):
            return None            # a Rust enum's variant part, or something not a field
        field = layout(module, _field(member, "baseType"), depth + 1)
        if field is None:
            return None
        off = int(_field(member, "offset") or 0) // 8
        out.update({off + o: k for o, k in field[1].items()})
    return size, out


def copied_kind(module, inst, size: int) -> str | None:
    """The kind of data an integer load or store of `size` bytes moves, from the debug info of
    its location: in a typed copy routine (LLVM makes small memcpys such pairs), the one kind
    of the routine's type parameter if it has one throughout; in any generic function of Rust's
    standard library over one integer type T (`ManuallyDrop<usize>::new`, a sort of indices),
    integer data, which is all such code moves. None otherwise."""
    lay = copied_layout(module, inst)
    if not lay:
        sp = _subprogram(module, inst.md.get("!dbg"))
        if sp and _rust_std_root(module, sp) in ("core", "alloc"):
            t = _typed(layout(module, _type_parameter(module, sp)))
            if t and set(t[1].values()) == {"int"}:
                return "int"
        return None
    kind = uniform_kind(*lay)
    return kind if kind == "int" or kind and size % type_size(kind, {}) == 0 else None


def uniform_kind(size: int, lay: dict) -> str | None:
    """The one kind that fills a value of `size` bytes laid out as `lay` ({offset: kind}):
    'int' where it holds integers only; None where its kinds are mixed or leave gaps."""
    kinds = set(lay.values())
    if kinds <= {"int"}:
        return "int"
    kind = kinds.pop() if len(kinds) == 1 else None
    return kind if kind and len(lay) * type_size(kind, {}) == size else None


_DECLARE = re.compile(r'#dbg_declare\(ptr (%[-\w.$]+|%"[^"]+"), (![0-9]+), !DIExpression\(([^)]*)\)')
_FRAGMENT = re.compile(r"^DW_OP_LLVM_fragment, (\d+), (\d+)$")


def _record_layout(module, var: str, expr: str):
    """The layout of what a debug record (`#dbg_declare`, `#dbg_value`) of variable `var` with
    expression `expr` describes: the variable's type, or the fragment of it the expression
    names; None for any other expression (one that computes the address or the value)."""
    lay = layout(module, _field(module.metadata.get(var, ""), "type"))
    frag = _FRAGMENT.match(expr.strip())
    if lay and frag:
        lo, n = int(frag.group(1)) // 8, int(frag.group(2)) // 8
        return n, {o - lo: k for o, k in lay[1].items() if lo <= o < lo + n}
    return None if expr.strip() else lay


def declared_layouts(module, fn) -> dict:
    """{alloca: (size, {byte offset: kind})} from the function's `#dbg_declare` records (full
    debug info): the declared variable's type, or the fragment of it an SROA slice holds (the
    captures of a Rust closure moved with its iterator). Byte arrays and types the debug info
    does not lay out (enums with variants, unions) are left out, and so is an alloca two
    records give different layouts."""
    memo = module.__dict__.setdefault("_declared_layouts", {})
    if fn.name in memo:
        return memo[fn.name]
    out, span = {}, module._bodies.get(fn.name)
    for line in module._lines[span[0]:span[1]] if span else ():
        m = _DECLARE.search(line) if "#dbg_declare(ptr %" in line else None
        if not m:
            continue
        lay = _typed(_record_layout(module, m.group(2), m.group(3)))
        name = m.group(1)
        out[name] = lay if out.get(name, lay) == lay else None
    memo[fn.name] = out = {k: v for k, v in out.items() if v}
    return out


_VALUE = re.compile(r'#dbg_value\(i(?:8|16|32|64) (%[-\w.$]+|%"[^"]+"), (![0-9]+), '
                    r'!DIExpression\(([^)]*)\)')


def valued_kind(module, fn, name: str) -> str | None:
    """The kind of data the integer value `name` holds, from the function's `#dbg_value`
    records of it (full debug info): the piece of a variable's type it is (`DW_OP_LLVM_fragment`)
    when one kind fills that piece (a `&str`'s length moved as an `i64` beside its pointer, in
    unoptimized Rust); None where no record says, or two records disagree."""
    memo = module.__dict__.setdefault("_valued_kinds", {})
    if fn.name not in memo:
        out, span = {}, module._bodies.get(fn.name)
        for line in module._lines[span[0]:span[1]] if span else ():
            m = _VALUE.search(line) if "#dbg_value(i" in line else None
            if not m:
                continue
            lay = _record_layout(module, m.group(2), m.group(3))
            kind = uniform_kind(*lay) if lay and lay[0] else None
            out[m.group(1)] = kind if out.get(m.group(1), kind) == kind else None
        memo[fn.name] = out
    return memo[fn.name].get(name)
