"""libstdc++ `std::vector`s with `std::allocator` inside a type: their byte offsets.

clang names a vector's implementation after its element and allocator types, so the layout
(start, finish and end-of-storage pointers) and the allocator (`operator new`) are known from
the type alone (api/static_vectors.py, analysis/activity_memory.py)."""
from __future__ import annotations

import re

from enzyme_cc.ir.lexer import split_fields, type_size
from .type_layout import field_offsets

_VECTOR = re.compile(r'%"class\.std::vector(\.\d+)?"$')
# (the implementation's name, where clang keeps the template arguments)
_STD_ALLOCATOR = re.compile(r"_Vector_base<.*, std::allocator<.*>>::_Vector_impl")


def vector_offsets(module, ty: str | None) -> list[int]:
    """Byte offsets of the libstdc++ vectors with std::allocator inside type ty (the type
    itself, struct fields, array elements)."""
    return _vectors_in(ty or "", module.named_types, 0, 0) if ty else []


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
