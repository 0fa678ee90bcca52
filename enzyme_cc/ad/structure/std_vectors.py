"""libstdc++ `std::vector`s with `std::allocator` inside a type: their byte offsets.

clang names a vector's implementation after its element and allocator types, so the layout
(start, finish and end-of-storage pointers) and the allocator (`operator new`) are known from
the type alone (api/static_vectors.py, analysis/activity_memory.py)."""
from __future__ import annotations

import re

from enzyme_cc.ir.lexer import split_fields, type_size
from .type_layout import decompose, field_offsets, global_named, global_type, layout

_VECTOR = re.compile(r'%"class\.std::vector(\.\d+)?"$')
# (the implementation's name, where clang keeps the template arguments)
_STD_ALLOCATOR = re.compile(r"_Vector_base<.*, std::allocator<.*>>::_Vector_impl")


def vector_offsets(module, g: str) -> list[int]:
    """Byte offsets of the libstdc++ vectors with std::allocator inside global g (the global
    itself, struct fields, array elements): by the type's names, or where the type is a literal
    one (C++20 drops the names of constant-initialized globals' types) by the vector members
    called on that address (`std::vector<double, std::allocator<double>>::resize(&g.y)`, the
    destructor registered with __cxa_atexit). Each has three pointer slots there."""
    ty = global_type(module, g)
    if not ty:
        return []
    found = set(_vectors_in(ty, module.named_types, 0, 0)) | _members_called(module).get(g, set())
    slots = layout(ty, module.named_types)
    return sorted(o for o in found if all(slots.get(o + k) == "ptr" for k in (0, 8, 16)))


# a member of std::vector<T, std::allocator<T>> (not vector<bool>, whose layout differs)
_MEMBER = re.compile(r"@_ZNK?St6vectorI(?!b)(\w+?)SaI\1EE\w*$")


def _members_called(module) -> dict[str, set]:
    """global -> the offsets in it that vector members are called on (memoized per module)."""
    memo = module.__dict__.get("_std_vector_members")
    if memo is not None:
        return memo
    memo = module._std_vector_members = {}
    for f, (lo, hi) in module._bodies.items():
        if not any("St6vectorI" in line for line in module._lines[lo:hi]):
            continue
        fn = module.function(f)
        for inst in fn.insts():
            if inst.op not in ("call", "invoke") or not inst.ops:
                continue
            if _MEMBER.match(inst.callee or ""):
                this = inst.ops[0].value
            elif inst.callee == "@__cxa_atexit" and len(inst.ops) > 1 and \
                    _MEMBER.match(inst.ops[0].value):
                this = inst.ops[1].value
            else:
                continue
            base, off = decompose(module, fn, this)
            g = base if base.startswith("@") else global_named(base)
            if g and off is not None:
                memo.setdefault(g, set()).add(off)
    return memo


def _is_std_vector(ty: str, named) -> bool:
    if not _VECTOR.match(ty) or type_size(ty, named) != 24:
        return False
    names, cur = [], ty
    for _ in range(6):              # vector -> _Vector_base -> _Vector_impl -> _impl_data
        body = named.get(cur, "").strip()
        fields = split_fields(body) if body.startswith("{") else []
        if fields == ["ptr", "ptr", "ptr"]:
            return any(_STD_ALLOCATOR.search(n) for n in names)
        if len(fields) != 1 or not fields[0].startswith("%"):
            return False
        cur = fields[0].strip()
        names.append(cur)
    return False


def _vectors_in(ty: str, named, base: int, depth: int) -> list[int]:
    ty = ty.strip()
    if depth > 8:
        return []
    if _is_std_vector(ty, named):
        return [base]
    body = named.get(ty, ty).strip()
    if body.startswith("{"):
        return [v for f, pos in field_offsets(body, named)
                for v in _vectors_in(f, named, base + pos, depth + 1)]
    if body.startswith("[") and " x " in body:
        n, elem = body[1:-1].split(" x ", 1)
        size = type_size(elem.strip(), named)
        first = _vectors_in(elem, named, 0, depth + 1)
        return [base + k * size + o for k in range(min(int(n), 64)) for o in first]
    return []
