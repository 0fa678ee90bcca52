"""One instruction of LLVM IR text -> an Inst (model.py): opcode, result name and type, typed
operands, flags, metadata attachments, by one small parser per opcode."""
from __future__ import annotations

import re

from .lexer import (tokenize, parse_type, parse_value, skip_balanced, split_fields,
                    _CONST_EXPR)
from .inst import BINARY, CASTS, FAST_MATH, INT_FLAGS, Inst, Operand, split_commas


def _strip_md(toks):
    md = {}
    while len(toks) >= 3 and toks[-2].startswith("!") and toks[-3] == ",":
        md[toks[-2]] = toks[-1]
        toks = toks[:-3]
    # `!{...}` inline attachments
    while len(toks) >= 4 and toks[-1] == "}" and "!" in toks:
        k = len(toks) - 1
        while toks[k] != "!{" and k > 0:
            k -= 1
        if k < 2 or toks[k - 2] != ",":
            break
        md[toks[k - 1]] = " ".join(toks[k:])
        toks = toks[:k - 2]
    return toks, md


def parse_inst(line: str, named_types=None) -> Inst:
    if named_types is not None and named_types is not _NAMED_TYPES:
        _NAMED_TYPES.clear()
        _NAMED_TYPES.update(named_types)
    toks, md = _strip_md(tokenize(line))
    name = None
    body = toks
    if len(toks) > 2 and toks[1] == "=" and toks[0].startswith("%"):
        name, body = toks[0], toks[2:]
    k = 0
    while body[k] in ("tail", "musttail", "notail"):
        k += 1
    op = body[k]
    inst = Inst(name, op, "void", toks, md)
    p = _PARSERS.get(op)
    if p:
        p(inst, body, k + 1)
    return inst


def _flags(inst, body, i, allowed):
    while i < len(body) and body[i] in allowed:
        inst.flags.append(body[i])
        i += 1
    return i


def _typed_list(inst, body, i, end=None):
    for part in split_commas(body, i, len(body) if end is None else end):
        if not part:
            continue
        ty, j = parse_type(part, 0)
        j = _skip_attrs(part, j)
        if j < len(part):
            inst.ops.append(Operand(ty, parse_value(part, j)[0]))


_TYPE_WORDS = {"void", "double", "float", "half", "bfloat", "x86_fp80", "fp128", "ppc_fp128", "ptr",
               "label", "token", "x86_amx", "target"}
_VALUE_WORDS = {"null", "true", "false", "undef", "poison", "zeroinitializer", "none", "splat",
                "blockaddress", "dso_local_equivalent", "no_cfi", "ptrauth", "asm", "metadata"}


def _skip_attrs(part, j):
    """Skip parameter attributes (noundef, align 8, captures(none), dead_on_return, sret(T), any
    other bare word with optional parenthesized argument) up to the value itself."""
    while j < len(part) - 1:
        t = part[j]
        if t in _VALUE_WORDS or t in _CONST_EXPR or t in _TYPE_WORDS or re.match(r"^i\d+$", t) \
                or not re.match(r"^[a-z_][a-z0-9_]*$", t):
            break
        j += 1
        if j < len(part) and part[j] == "(":
            j = skip_balanced(part, j)
        elif t == "align" and part[j].isdigit():
            j += 1
    return j


def _p_binary(inst, body, i):
    i = _flags(inst, body, i, FAST_MATH | INT_FLAGS)
    ty, i = parse_type(body, i)
    inst.ty = ty
    a, i = parse_value(body, i)
    b, _ = parse_value(body, i + 1)
    inst.ops = [Operand(ty, a), Operand(ty, b)]


def _p_fneg(inst, body, i):
    i = _flags(inst, body, i, FAST_MATH)
    ty, i = parse_type(body, i)
    inst.ty = ty
    inst.ops = [Operand(ty, parse_value(body, i)[0])]


def _p_cmp(inst, body, i):
    i = _flags(inst, body, i, FAST_MATH | {"samesign"})
    inst.pred = body[i]
    ty, i = parse_type(body, i + 1)
    a, i = parse_value(body, i)
    b, _ = parse_value(body, i + 1)
    inst.ops = [Operand(ty, a), Operand(ty, b)]
    inst.ty = "i1" if not ty.startswith("<") else "<" + ty[1:].split(" x ")[0] + " x i1 >"


def _p_cast(inst, body, i):
    i = _flags(inst, body, i, INT_FLAGS | FAST_MATH)
    ty, i = parse_type(body, i)
    v, i = parse_value(body, i)
    inst.ops = [Operand(ty, v)]
    inst.ty, _ = parse_type(body, i + 1)      # after 'to'
    inst.src_ty = ty


def _p_select(inst, body, i):
    i = _flags(inst, body, i, FAST_MATH)
    _typed_list(inst, body, i)
    inst.ty = inst.ops[1].ty


def _p_phi(inst, body, i):
    i = _flags(inst, body, i, FAST_MATH)
    ty, i = parse_type(body, i)
    inst.ty = ty
    for part in split_commas(body, i, len(body)):
        # part = ['[', value..., ',', '%bb', ']'] already split at top-level; inside brackets
        inner = part[1:-1]
        cm = max(k for k, t in enumerate(inner) if t == ",")
        val = " ".join(inner[:cm])
        inst.incoming.append((val, inner[cm + 1]))
        inst.ops.append(Operand(ty, val))


def _p_load(inst, body, i):
    while body[i] in ("volatile", "atomic"):
        inst.flags.append(body[i])
        i += 1
    ty, i = parse_type(body, i)
    inst.ty = ty
    pty, j = parse_type(body, i + 1)
    inst.ops = [Operand(pty, parse_value(body, j)[0])]


def _p_store(inst, body, i):
    while body[i] in ("volatile", "atomic"):
        inst.flags.append(body[i])
        i += 1
    parts = split_commas(body, i, len(body))
    for part in parts[:2]:
        ty, j = parse_type(part, 0)
        inst.ops.append(Operand(ty, parse_value(part, j)[0]))


def _p_gep(inst, body, i):
    while body[i] in ("inbounds", "nuw", "nusw") or body[i] == "inrange":
        if body[i] == "inrange":
            i = skip_balanced(body, i + 1)
            continue
        inst.flags.append(body[i])
        i += 1
    parts = split_commas(body, i, len(body))
    inst.src_ty = " ".join(parts[0])
    for part in parts[1:]:
        if part[0] == "inrange":
            part = part[skip_balanced(part, 1):]
        ty, j = parse_type(part, 0)
        inst.ops.append(Operand(ty, parse_value(part, j)[0]))
    inst.ty = inst.ops[0].ty if not any(o.ty.startswith("<") for o in inst.ops) else \
        next(o.ty for o in inst.ops if o.ty.startswith("<")).split(" x ")[0] + " x ptr >"


def _p_alloca(inst, body, i):
    if body[i] == "inalloca":
        i += 1
    ty, i = parse_type(body, i)
    inst.src_ty = ty
    inst.ty = "ptr"
    parts = split_commas(body, i, len(body))
    for part in parts:
        if part and part[0] not in ("align", "addrspace"):
            t2, j = parse_type(part, 0)
            inst.ops.append(Operand(t2, parse_value(part, j)[0]))


def _p_call(inst, body, i):
    # [fast-math] [cconv] [ret attrs] <ty> [(fnargs)] <callee>(args) [fn attrs] [bundles]
    i = _flags(inst, body, i, FAST_MATH)
    while body[i] in ("fastcc", "coldcc", "ccc", "swiftcc", "tailcc") or \
            (body[i].startswith("cc") and body[i][2:].isdigit()):
        i += 1
    i = _skip_attrs(body, i)
    ty, i = parse_type(body, i)
    if body[i] == "(":                      # explicit function type: ret (params)
        j = skip_balanced(body, i)
        inst.fnty = ty + " " + " ".join(body[i:j])
        i = j
    inst.ty = ty
    if body[i] == "asm":                    # inline asm: asm [flags] "code", "constraints"
        while body[i] != "," or not body[i - 1].startswith('"'):
            i += 1
        callee, i = "asm", i + 2
    else:
        callee, i = parse_value(body, i)
    inst.callee = callee
    close = skip_balanced(body, i)
    _typed_list(inst, body, i + 1, close - 1)
    rest = body[close:]
    if inst.op == "invoke":
        inst.targets = [t for k, t in enumerate(rest) if k > 0 and rest[k - 1] == "label"]


def _p_br(inst, body, i):
    inst.targets = [body[k + 1] for k in range(i, len(body) - 1) if body[k] == "label"]
    if body[i] == "i1":
        inst.ops = [Operand("i1", body[i + 1])]


def _p_switch(inst, body, i):
    ty, i = parse_type(body, i)
    inst.ops = [Operand(ty, body[i])]
    inst.targets = [body[k + 1] for k in range(i, len(body) - 1) if body[k] == "label"]


def _p_ret(inst, body, i):
    if body[i] != "void":
        ty, i = parse_type(body, i)
        inst.ops = [Operand(ty, parse_value(body, i)[0])]


def _p_extractvalue(inst, body, i):
    ty, i = parse_type(body, i)
    v, i = parse_value(body, i)
    inst.ops = [Operand(ty, v)]
    inst.indices = [int(t) for t in body[i:] if t.lstrip("-").isdigit()]
    inst.ty = element_type(ty, inst.indices, _NAMED_TYPES)


_NAMED_TYPES: dict = {}


def element_type(ty: str, indices, named) -> str:
    """Type reached by extractvalue-style indices into an aggregate type."""
    for k in indices:
        ty = named.get(ty.strip(), ty).strip()
        if ty.startswith(("{", "<{")):
            ty = split_fields(ty)[k]
        elif ty.startswith("["):
            ty = ty[1:-1].split(" x ", 1)[1].strip()
        else:
            return "void"
    return ty


def _p_insertvalue(inst, body, i):
    ty, i = parse_type(body, i)
    v, i = parse_value(body, i)
    ety, j = parse_type(body, i + 1)
    e, j = parse_value(body, j)
    inst.ops = [Operand(ty, v), Operand(ety, e)]
    inst.indices = [int(t) for t in body[j:] if t.lstrip("-").isdigit()]
    inst.ty = ty


def _p_freeze(inst, body, i):
    ty, i = parse_type(body, i)
    inst.ty = ty
    inst.ops = [Operand(ty, parse_value(body, i)[0])]


def _p_generic(inst, body, i):
    """Vector ops, landingpad, ...: typed operand list; result type = first operand's."""
    try:
        _typed_list(inst, body, i)
    except (ValueError, IndexError):
        pass


def _vector_parts(ty: str):
    """'< 4 x double >' -> (4, 'double')."""
    n, elem = ty.strip()[1:-1].split(" x ", 1)
    return int(n), elem.strip()


def _p_extractelement(inst, body, i):
    _p_generic(inst, body, i)
    if inst.ops and inst.ops[0].ty.startswith("<"):
        inst.ty = _vector_parts(inst.ops[0].ty)[1]


def _p_insertelement(inst, body, i):
    _p_generic(inst, body, i)
    if inst.ops:
        inst.ty = inst.ops[0].ty


def _p_shufflevector(inst, body, i):
    """ops: the two vectors and the mask; inst.indices: the mask (-1 for a poison lane)."""
    _p_generic(inst, body, i)
    if len(inst.ops) != 3 or not inst.ops[0].ty.startswith("<"):
        return
    m, _ = _vector_parts(inst.ops[2].ty)
    inst.ty = f"< {m} x {_vector_parts(inst.ops[0].ty)[1]} >"
    mask = inst.ops[2].value
    if mask == "zeroinitializer":
        inst.indices = [0] * m
    elif mask in ("poison", "undef"):
        inst.indices = [-1] * m
    else:
        lanes = [t for t in tokenize(mask) if t not in ("<", ">", ",", "i32")]
        inst.indices = [int(t) if t.lstrip("-").isdigit() else -1 for t in lanes]


def _p_atomicrmw(inst, body, i):
    """[volatile] <operation> ptr %p, <ty> %v [syncscope] <ordering>: ops [p, v]; inst.pred is
    the operation; the result (the old value) has v's type."""
    if body[i] == "volatile":
        i += 1
    inst.pred = body[i]
    ty, j = parse_type(body, i + 1)
    p, j = parse_value(body, j)
    vty, j = parse_type(body, j + 1)
    v, j = parse_value(body, j)
    inst.ops = [Operand(ty, p), Operand(vty, v)]
    inst.ty = vty


def _p_cmpxchg(inst, body, i):
    while body[i] in ("weak", "volatile"):
        i += 1
    ty, j = parse_type(body, i)
    p, j = parse_value(body, j)
    cty, j = parse_type(body, j + 1)
    c, j = parse_value(body, j)
    nty, j = parse_type(body, j + 1)
    n, j = parse_value(body, j)
    inst.ops = [Operand(ty, p), Operand(cty, c), Operand(nty, n)]
    inst.ty = "{ " + cty + ", i1 }"


_PARSERS = {**{op: _p_binary for op in BINARY}, **{op: _p_cast for op in CASTS},
            "fneg": _p_fneg, "icmp": _p_cmp, "fcmp": _p_cmp, "select": _p_select, "phi": _p_phi,
            "load": _p_load, "store": _p_store, "getelementptr": _p_gep, "alloca": _p_alloca,
            "call": _p_call, "invoke": _p_call, "br": _p_br, "switch": _p_switch, "ret": _p_ret,
            "extractvalue": _p_extractvalue, "insertvalue": _p_insertvalue, "freeze": _p_freeze,
            "extractelement": _p_extractelement, "insertelement": _p_insertelement,
            "shufflevector": _p_shufflevector, "atomicrmw": _p_atomicrmw, "cmpxchg": _p_cmpxchg}
