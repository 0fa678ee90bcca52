"""Values in the shapes a marker call declares: a derivative's results and tangents stored
into the leaves of the marker's declared result type (`_pack`), leaves of aggregates
(`_leaves`, `_extract`), and the bytes of our tape's header."""
from __future__ import annotations

import re

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import is_fp, one_element, split_fields, float_cast, type_size
from ..structure.diagnostics import located

# Our tape is a header {data, top, capacity, deferred frees} (ad/tape/tape.py) over a growing byte
# stack; a caller-allocated tape (enzyme_allocated) holds that header, so its size does not depend
# on the function.
TAPE_HEADER_BYTES = 32
# named struct types of the module being rewritten (set by markers.find_requests)
_NAMED: dict = {}
_BYTES = re.compile(r"\[(\d+)xi8\]$")      # (spaces removed)


def _pack(gen, req, lines, tmp, vals, what) -> list[str]:
    """Store the scalars vals [(value, type)] into the leaves of the marker's declared result."""
    inst = req.inst
    want = req.sret[0] if req.sret else inst.ty
    if not vals or want == "void" or (not inst.name and not req.sret):
        if inst.name:
            lines.append(f"{inst.name} = {_identity(want, '0.0' if is_fp(want) else 'zeroinitializer')}")
        return lines
    raw = _BYTES.match(want.replace(" ", "")) if req.sret else None
    if raw:
        return _store_bytes(gen, req, lines, tmp, vals, what, int(raw.group(1)))
    slots = _leaves(gen.module.named_types.get(want, want))
    if len(slots) < len(vals):
        raise UserError(f"{located(gen.module, req.caller, inst)}: {inst.callee[1:]} returns {want}, "
                        f"which cannot hold {len(vals)} {what}")
    acc = "zeroinitializer"
    for (path, sty), (v, vty) in zip(slots, vals):
        v = _convert(lines, tmp, v, vty, sty)
        acc = v if not path else _insert(lines, tmp, want, acc, path, sty, v)
    if req.sret:
        lines.append(f"store {want} {acc}, ptr {req.sret[1]}")
    else:
        lines.append(f"{inst.name} = {_identity(want, acc)}")
    return lines


def _store_bytes(gen, req, lines, tmp, vals, what, size) -> list[str]:
    """The scalars stored one after the other, each at its natural alignment, into a result
    returned through a pointer typed as bytes (rustc's sret of `#[repr(C)] struct([f64; N])`)."""
    off = 0
    for v, vty in vals:
        n = type_size(vty)
        off = -(-off // n) * n
        if off + n > size:
            raise UserError(f"{located(gen.module, req.caller, req.inst)}: "
                            f"{req.inst.callee[1:]} returns {size} bytes, which cannot hold "
                            f"{len(vals)} {what}")
        at = tmp()
        lines.append(f"{at} = getelementptr inbounds i8, ptr {req.sret[1]}, i64 {off}")
        lines.append(f"store {vty} {v}, ptr {at}")
        off += n
    return lines


def _convert(lines, tmp, val, from_ty, to_ty):
    if from_ty == to_ty:
        return val
    elem = one_element(to_ty)
    if elem:
        # (flang's `character(kind=c_char), value` dummy: [1 x i8], given a promoted int)
        val, t = _convert(lines, tmp, val, from_ty, elem), tmp()
        lines.append(f"{t} = insertvalue {to_ty} poison, {elem} {val}, 0")
        return t
    t = tmp()
    if is_fp(from_ty) and is_fp(to_ty):
        op = float_cast(from_ty, to_ty)
    elif from_ty.startswith("i") and to_ty.startswith("i"):
        op = "sext" if int(from_ty[1:]) < int(to_ty[1:]) else "trunc"
    else:
        raise UserError(f"cannot pass a {from_ty} argument as {to_ty}")
    lines.append(f"{t} = {op} {from_ty} {val} to {to_ty}")
    return t


def _leaves(ty):
    """(path, type) of every scalar in a struct/array/vector type, in memory order."""
    ty = _NAMED.get(ty.strip(), ty.strip())
    if ty.startswith("{") or ty.startswith("<{"):
        return [([k] + p, t) for k, f in enumerate(split_fields(ty)) for p, t in _leaves(f)]
    if ty.startswith("[") or (ty.startswith("<") and " x " in ty):
        n, elem = ty[1:-1].split(" x ", 1)
        tag = "v" if ty.startswith("<") else "a"
        return [([(tag, k)] + p, t) for k in range(int(n)) for p, t in _leaves(elem.strip())]
    return [([], ty)]


def _insert(lines, tmp, ty, agg, path, sty, v):
    """insertvalue/insertelement along a leaf path (struct indices, ('a', k), ('v', k))."""
    ty = ty.strip()
    body = _NAMED.get(ty, ty)
    step, rest = path[0], path[1:]
    if isinstance(step, tuple) and step[0] == "v":
        t = tmp()
        lines.append(f"{t} = insertelement {ty} {agg}, {sty} {v}, i32 {step[1]}")
        return t
    idx = step[1] if isinstance(step, tuple) else step
    if rest:
        sub_ty = split_fields(body)[idx] if body.startswith(("{", "<{")) else \
            body[1:-1].split(" x ", 1)[1].strip()
        cur = tmp()
        lines.append(f"{cur} = extractvalue {ty} {agg}, {idx}")
        v = _insert(lines, tmp, sub_ty, cur, rest, sty, v)
        sty = sub_ty
    t = tmp()
    lines.append(f"{t} = insertvalue {ty} {agg}, {sty} {v}, {idx}")
    return t


def _extract(lines, tmp, ty, agg, path):
    """extractvalue/extractelement along a leaf path (struct indices, ('a', k), ('v', k))."""
    for step in path:
        body = _NAMED.get(ty.strip(), ty.strip())
        t = tmp()
        if isinstance(step, tuple) and step[0] == "v":
            lines.append(f"{t} = extractelement {ty} {agg}, i32 {step[1]}")
        else:
            idx = step[1] if isinstance(step, tuple) else step
            lines.append(f"{t} = extractvalue {ty} {agg}, {idx}")
        ty = split_fields(body)[step] if not isinstance(step, tuple) else \
            body[1:-1].split(" x ", 1)[1].strip()
        agg = t
    return agg


def _identity(ty, v):
    if is_fp(ty):
        return f"fadd {ty} {v}, -0.0" if not ty.startswith("<") else f"fadd {ty} {v}, zeroinitializer"
    return f"select i1 true, {ty} {v}, {ty} {v}"
