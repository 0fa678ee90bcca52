"""The layout of a stack object from the stores that fill it: evidence for an untyped copy
(copy_types.py) out of a local whose every byte the function writes itself.

Rust builds a `Vec` in a local (capacity, pointer, length) and copies it into its caller's slot,
whose view of that slot is a union: a `Result<Vec<f64>, E>` keeps an error's `f64` where the
vector keeps its length. The kinds accessed through both ends then disagree, while the stores
that filled the local say what this copy moves. An integer store counts only when its value was
made by integer arithmetic (or is a non-zero constant): an `i64` loaded or bit-manipulated may
hold a double's bits, and a zero may be a zeroed double."""
from __future__ import annotations

import functools

from enzyme_cc.ir.lexer import type_size
from ..structure.type_layout import decompose
from .activity_basics import ALLOCATORS
from .typeinfo import param_kinds

_ARITH = ("add", "sub", "mul", "udiv", "sdiv", "urem", "srem")
_COPIES = ("@llvm.memcpy", "@llvm.memmove")


def stored_layout(module, fn, copy, length: int):
    """[(offset, size, kind)] of a copy of `length` bytes out of a stack object of fn, from
    fn's stores into the object, when every byte the copy reads is stored with one kind and
    nothing else writes the object with another (a callee with bitcode handed it accesses it
    as no float); else None."""
    base, start = decompose(module, fn, copy.ops[1].value)
    if start is None or getattr(fn.defs.get(base), "op", None) != "alloca":
        return None
    kinds = _stores_into(module, fn, copy, base)
    return None if kinds is None else _tiled(kinds, start, length)


def _stores_into(module, fn, copy, base, depth: int = 2):
    """{offset: (size, kind)} of fn's stores into `base`, and those of the callees that fill it
    (a `writeonly` pointer parameter: rustc's struct returned through a pointer), `depth`
    calls deep; None when a write is not understood (a store at an unknown offset or of an
    undecided kind, two kinds at one offset, a copy or a call without bitcode writing it, a
    callee that accesses it as a float without filling it)."""
    kinds: dict[int, tuple] = {}
    users = functools.cache(fn.users)      # (only a stored load or parameter asks for them)
    for inst in fn.insts():
        if inst.op == "store":
            b, off = decompose(module, fn, inst.ops[1].value)
            if b != base:
                if _into(module, fn, inst.ops[0], base):
                    return None               # its address escapes into memory
                continue
            kind = _stored_kind(fn, inst.ops[0], users)
            size = type_size(inst.ops[0].ty, module.named_types)
            if off is None or not size or not _add(kinds, off, size, kind):
                return None
        elif inst.op in ("call", "invoke") and inst is not copy:
            for j, o in enumerate(inst.ops):
                if not _into(module, fn, o, base):
                    continue
                callee = inst.callee or ""
                if callee.startswith("@llvm.lifetime.") or callee.startswith(_COPIES) and j == 1:
                    continue                  # a lifetime marker, or a copy out of it
                filled = _filled_by(module, callee, j, depth) \
                    if decompose(module, fn, o.value)[1] == 0 else None
                if filled is not None:
                    if not all(_add(kinds, off, size, kind) for off, (size, kind) in filled.items()):
                        return None
                    continue
                if callee.startswith(_COPIES) or not module.defines(callee) or \
                        param_kinds(module, callee, j) & {"double", "float"}:
                    return None
        elif inst.op not in ("load", "getelementptr", "call", "invoke") and \
                any(_into(module, fn, o, base) for o in inst.ops):
            return None                       # it is also reached another way
    return kinds


def _add(kinds, off, size, kind) -> bool:
    """Notes a store of `kind` (a zero: no evidence) at off; False where it disagrees with an
    earlier one (another kind, or another size)."""
    if kind == "zero":
        kinds.setdefault(off, (size, None))
        return kinds[off][0] == size
    if kind is None or kinds.get(off, (size, kind))[1] not in (None, kind) or \
            kinds.get(off, (size, kind))[0] != size:
        return False
    kinds[off] = (size, kind)
    return True


def _filled_by(module, callee: str, j: int, depth: int):
    """The stores of `callee` into its `writeonly` pointer parameter j, or None."""
    fn = module.function(callee) if depth > 0 and module.defines(callee) else None
    if fn is None or j >= len(fn.params) or fn.params[j].ty != "ptr" or \
            "writeonly" not in fn.params[j].attrs:
        return None
    return _stores_into(module, fn, None, fn.params[j].name, depth - 1)


def _into(module, fn, operand, base) -> bool:
    """The operand is an address in base."""
    return operand.ty == "ptr" and operand.value.startswith("%") and \
        decompose(module, fn, operand.value)[0] == base


def _stored_kind(fn, value, users, depth: int = 0):
    """'double', 'float', 'ptr', 'int' (made by integer arithmetic, a non-zero integer
    constant, or a loaded value or parameter counted with: a length), 'zero' (an integer zero: no
    evidence), or None (undecided)."""
    ty = value.ty
    if ty in ("double", "float", "ptr"):
        return ty
    if not ty.startswith("i") or not ty[1:].isdigit():
        return None
    v = value.value
    if v.lstrip("-").isdigit():
        return "zero" if int(v) == 0 else "int"
    if v in ("true", "false"):
        return "int"
    d = fn.defs.get(v)
    op = getattr(d, "op", None)
    if op in _ARITH or op == "icmp":
        return "int"
    if op in ("load", None) and _counts(v, users):
        return "int"                          # (a loaded value or a parameter)
    if op in ("zext", "sext", "trunc") and depth < 4:
        return "int" if _stored_kind(fn, d.ops[0], users, depth + 1) in ("int", "zero") else None
    if op in ("phi", "select") and depth < 4:
        ops = d.ops[1:] if op == "select" else d.ops
        # (each distinct incoming value once: a loop's phi may list one value per branch)
        found = {_stored_kind(fn, o, users, depth + 1)
                 for o in {o.value: o for o in ops}.values()}
        found.discard("zero")
        return "int" if found == {"int"} else None
    return None


def _counts(v: str, users, depth: int = 0) -> bool:
    """v is used as a count: an operand of integer arithmetic, an address's index or an
    allocation's size, directly or scaled by a shift (a Vec's length turned into bytes); a
    double's bits are not."""
    for u in users().get(v, ()):
        if u.op in _ARITH or u.op == "getelementptr" and any(o.value == v for o in u.ops[1:]) \
                or u.op in ("call", "invoke") and u.callee in ALLOCATORS:
            return True
        if u.op == "shl" and u.ops[0].value == v and depth < 2 and _counts(u.name, users, depth + 1):
            return True
    return False


def _tiled(kinds, start, length):
    """The ranges of [start, start + length) that kinds cover, one after the other with no
    gap; None when a byte is not covered or a store straddles an edge."""
    ranges, pos = [], start
    for off in sorted(kinds):
        size, kind = kinds[off]
        if off + size <= start or off >= start + length:
            continue
        if off != pos or kind is None or off + size > start + length:
            return None
        ranges.append((off - start, size, kind))
        pos = off + size
    return ranges if pos == start + length else None
