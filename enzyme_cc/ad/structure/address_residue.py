"""Where a pointer at a run-time offset can point: its object and the offsets c + k*g it can
lie at (a congruence), from the GEPs, the integer arithmetic of their indices and the phis of
loops. `&buf[i]` of a `double *` lies at 0 mod 8 of buf, `&recs[i].r` at 8 mod 56: the bytes
of a buffer that some code accesses as floats at run-time indices (copy_floats.py)."""
from __future__ import annotations

from math import gcd

from enzyme_cc.ir.lexer import type_size
from .type_layout import gep_step

_DEPTH = 24


def pointer_residue(module, fn, v: str):
    """(object, c, g): v points at byte c + k*g of the object for some integer k (g = 0: at c
    exactly), following GEPs, casts, and phis and selects that agree on the object."""
    memo = fn.__dict__.setdefault("_pointer_residues", {})
    if v not in memo:
        memo[v] = _pointer(module, fn, v, set(), 0)
    return memo[v]


def _pointer(module, fn, v, active, depth):
    d = fn.defs.get(v)
    op = getattr(d, "op", None)
    if depth > _DEPTH or op is None:
        return v, 0, 0
    if op in ("bitcast", "addrspacecast"):
        return _pointer(module, fn, d.ops[0].value, active, depth + 1)
    if op == "getelementptr":
        base, c, g = _pointer(module, fn, d.ops[0].value, active, depth + 1)
        named, ty = module.named_types, d.src_ty
        for j, o in enumerate(d.ops[1:]):
            ic, ig = integer_residue(fn, o.value)
            if j == 0:
                size = type_size(ty, named)
                c, g = c + ic * size, gcd(g, ig * size)
                continue
            step = gep_step(ty, ic if ig == 0 else None, named)
            if step is None:
                return v, 0, 0
            ty, pos, size = step
            c, g = c + pos, gcd(g, ig * size)
        return base, c, g
    if op in ("phi", "select") and d.ty == "ptr":
        if v in active:
            return v, 0, 0                      # (the phi itself: its offsets are the others')
        active.add(v)
        try:
            ins = [o.value for o in (d.ops[1:] if op == "select" else d.ops)]
            parts = [_pointer(module, fn, w, active, depth + 1) for w in ins]
        finally:
            active.discard(v)
        outside = [p for p in parts if p[0] != v]
        if not outside or len({p[0] for p in outside}) != 1:
            return v, 0, 0
        c0 = outside[0][1]
        g = 0
        for base, c, pg in parts:
            # (an arm from the phi itself steps by its offset c, and by pg, every iteration)
            g = gcd(g, gcd(pg, c if base == v else c - c0))
        return outside[0][0], c0, g
    return v, 0, 0


def integer_residue(fn, v: str, depth: int = 0):
    """(c, g): the integer v is c + k*g for some integer k (g = 0: exactly c; (0, 1): any)."""
    try:
        return int(v), 0
    except ValueError:
        pass
    d = fn.defs.get(v)
    op = getattr(d, "op", None)
    if depth > _DEPTH or op is None:
        return 0, 1
    if op in ("sext", "zext", "trunc"):
        return integer_residue(fn, d.ops[0].value, depth + 1)
    if op in ("add", "sub", "or") and (op != "or" or "disjoint" in getattr(d, "flags", ())):
        (a, ga), (b, gb) = (integer_residue(fn, o.value, depth + 1) for o in d.ops[:2])
        return (a - b if op == "sub" else a + b), gcd(ga, gb)
    if op in ("mul", "shl"):
        (a, ga), (b, gb) = (integer_residue(fn, o.value, depth + 1) for o in d.ops[:2])
        if gb == 0:
            m = b if op == "mul" else 1 << b
            return a * m, ga * m
        if op == "mul" and ga == 0:
            return a * b, a * gb
    return 0, 1
