"""The declared kind of bytes that an untagged access reaches inside a C++ record, found from
the struct-path TBAA tags of the function's other accesses through the same pointer: a tag
(`std::string`, field at offset 8) on `p + 8` says a std::string starts at `p`, and the
record's IR type says what lies at `p + 16` (the small-string buffer's union, moved as an i64
by the string's move assignment, which carries only a char tag). Used where nothing typed
touches those bytes (std::sort moving records that hold a std::string)."""
from __future__ import annotations

import re

from .diagnostics import demangled
from .type_layout import (class_types, decompose, layout, named_expand, opaque_layout,
                          tbaa_field, tbaa_scalar_kind, type_size)

_TYPEINFO = "typeinfo name for "


def record_kind(module, fn, ptr: str, size: int):
    """The one kind ('int', 'ptr', 'double', 'float') that the `size` bytes at ptr have in the
    record a struct-path tag through the same base places there, or None."""
    base, off = decompose(module, fn, ptr)
    if off is None:
        return None
    kinds = set()
    for at, tag in _tagged_accesses(module, fn).get(base, ()):
        field = tbaa_field(module, tag)
        if field is None:
            continue
        start = at - field[1]               # where the tag's record begins
        kind = _kind_in(module, field[0], off - start, size) if off >= start else None
        if kind is not None:
            kinds.add(kind)
    return kinds.pop() if len(kinds) == 1 else None


def _tagged_accesses(module, fn) -> dict:
    """{base: [(offset, tag)]} of the function's loads and stores with a TBAA tag (memoized)."""
    memo = module.__dict__.setdefault("_tagged_accesses", {})
    if fn.name not in memo:
        out: dict = {}
        for inst in fn.insts():
            if inst.op in ("load", "store") and "!tbaa" in inst.md:
                p = inst.ops[0].value if inst.op == "load" else inst.ops[1].value
                base, off = decompose(module, fn, p)
                if off is not None:
                    out.setdefault(base, []).append((off, inst.md["!tbaa"]))
        memo[fn.name] = out
    return memo[fn.name]


def _kind_in(module, node: str, rel: int, size: int):
    """The kind of bytes [rel, rel + size) of the record TBAA type node `node` names, by its IR
    type (every instance of the class: clang names a template's instances alike)."""
    m = re.match(r'!\{!"(_ZTS[^"]+)"', module.metadata.get(node, "").strip())
    if not m:
        return None
    name = demangled([m.group(1)])[0]
    if not name.startswith(_TYPEINFO):
        return None
    named = module.named_types
    kinds = set()
    types = class_types(module, name[len(_TYPEINFO):], unions=True)
    if not types:          # (no IR type left: the optimizer made every access a byte offset)
        return _member_kind(module, node, rel, size)
    for ty in types:
        body = named_expand(named[ty], named)
        if opaque_layout(body, named) or rel + size > (type_size(body, named) or 0):
            return None
        lay = layout(body, named)
        inside = {k for o, k in lay.items() if rel <= o < rel + size}
        if rel not in lay or len(inside) != 1:
            return None
        kinds |= inside
    return kinds.pop() if len(kinds) == 1 else None


_MEMBER = re.compile(r"(![0-9]+), i64 (\d+)")


def _member_kind(module, node: str, rel: int, size: int, depth: int = 0):
    """The kind of bytes [rel, rel + size) by the members a TBAA struct type node lists (each
    member's type node and offset; an array member is listed once, at its start): the member
    they lie in, through nested records. A char member (a char array) is 'int'."""
    members = [(t, int(o)) for t, o in _MEMBER.findall(module.metadata.get(node, ""))]
    ends = [o for _, o in members[1:]] + [None]
    for (t, o), end in zip(members, ends):
        if o <= rel and (end is None or rel + size <= end):
            sub = module.metadata.get(t, "")
            name = re.match(r'!\{!"([^"]*)"', sub.strip())
            if not name:
                return None
            if name.group(1) == "omnipotent char":
                return "int"
            kind = tbaa_scalar_kind(name.group(1))
            if kind is not None or not name.group(1).startswith("_ZTS") or depth > 4:
                return kind
            return _member_kind(module, t, rel - o, size, depth + 1)
    return None
