"""Records that hold pointers without a shadow beside pointers with one: a C++ closure capturing
a constant object by reference (`[&]`, `this` of an enzyme_const object) next to an active array,
handed to a callee that is not inlined (a recursive quadrature taking the lambda).

The record needs a shadow for the active pointer; the constant one has none to store there. The
callee reads it back from the record, and would read its shadow from the record's shadow: a null
pointer, through which the adjoints of the floats it reads through the constant pointer would be
added. Instead the callee's activity signature says which of the record's fields hold pointers
without a shadow (`DupFields`): a pointer loaded from one of them has no shadow in the callee
either (as the enzyme_const argument it came from), so what is read through it is constant.

That holds only where every reader of those fields knows it: the record and the parameters it is
passed as may be loaded from, stored into at other offsets, spilled to a local slot
(unoptimized code) and handed on whole to functions with bitcode that keep to the same rules
(`_confined`); otherwise nothing changes (the store rule refuses where floats are reached).
"""
from __future__ import annotations

from enzyme_cc.ir.lexer import type_size

from ..structure.type_layout import decompose, param_spill_slots, reloaded_param, underlying

_MARKERS = ("@llvm.lifetime", "@llvm.dbg", "@llvm.assume")
_FREES = ("@free", "@_ZdlPv", "@_ZdlPvm")
_ALLOCATORS = ("@malloc", "@_Znwm")


class DupFields(str):
    """The activity 'dup' (it compares equal to "dup" wherever code asks for a shadow) of a
    pointer to a record whose pointers at the byte offsets `fields` have no shadow. Keys that
    tell derivatives apart use act_key."""
    fields: frozenset

    def __new__(cls, fields):
        s = super().__new__(cls, "dup")
        s.fields = frozenset(fields)
        return s

    def __repr__(self):
        return f"dup-except{sorted(self.fields)}"


def act_key(acts) -> tuple:
    """An activity signature as a key: DupFields apart from a plain 'dup'."""
    return tuple((a, a.fields) if isinstance(a, DupFields) else a for a in acts)


def param_fields(fn, arg_act) -> dict:
    """{parameter: fields without a shadow} from the signature."""
    return {p.name: a.fields for p, a in zip(fn.params, arg_act) if isinstance(a, DupFields)}


def record_fields(module, fn, arg_act) -> dict:
    """{object: byte offsets of its fields that hold pointers without a shadow}: the
    signature's parameters, and the local records (allocas, blocks it allocates) into which
    this function stores a pointer derived from an enzyme_const argument (or read from such a
    field) at a constant offset, where every reader keeps to the rules (_confined)."""
    fields = param_fields(fn, arg_act)
    consts = {p.name for p, a in zip(fn.params, arg_act) if a == "const" and p.ty == "ptr"}
    if not consts and not fields:
        return fields
    found: dict = {}
    for inst in fn.insts():
        if inst.op != "store" or inst.ops[0].ty != "ptr" or \
                not _constant_root(module, fn, inst.ops[0].value, consts, fields):
            continue
        obj, off = decompose(module, fn, inst.ops[1].value)
        if off is not None and _fresh(fn, obj):
            found.setdefault(obj, set()).add(off)
    for obj, offs in found.items():
        offs, copies = frozenset(offs), {}
        if _confined(module, fn, obj, offs, consts, fields, set(), copies):
            fields[obj] = offs
            fields.update(copies)
    return fields


def field_load(module, fn, fields: dict, ptr: str) -> bool:
    """A pointer loaded from ptr is one without a shadow: ptr is a field listed in fields."""
    obj, off = decompose(module, fn, ptr)
    obj = reloaded_param(fn, obj) or obj
    return off is not None and off in fields.get(obj, ())


def fields_passed(module, fn, fields: dict, v: str):
    """The fields without a shadow of the record v points to the start of, or None."""
    obj, off = decompose(module, fn, v)
    obj = reloaded_param(fn, obj) or obj
    return fields.get(obj) if off == 0 else None


def _constant_root(module, fn, v: str, consts, fields) -> bool:
    """v is derived from an enzyme_const pointer argument, or read from a field of a record
    whose pointers there have no shadow."""
    if not v.startswith("%"):
        return False
    root = underlying(fn, v)
    if (reloaded_param(fn, root) or root) in consts:
        return True
    d = fn.defs.get(root)
    return getattr(d, "op", None) == "load" and field_load(module, fn, fields, d.ops[0].value)


def _uses(fn) -> dict:
    memo = fn.__dict__.get("_use_lists")
    if memo is None:
        memo = {}
        for inst in fn.insts():
            for o in inst.ops:
                memo.setdefault(o.value, []).append(inst)
        fn._use_lists = memo
    return memo


def _confined(module, fn, root: str, offs: frozenset, consts, fields, seen: set,
              copies: dict | None = None) -> bool:
    """Every use of the record at `root` (a local, or a parameter) and of pointers into it at
    constant offsets keeps the fields `offs` known: loads (pointers from those fields), stores
    elsewhere (or of constant pointers there), the parameter's spill slot, calls passing the
    record whole to a function with bitcode whose parameter keeps to the same rules, and whole
    copies into a local or a fresh heap block that keep to them too (a lambda passed by value:
    its byval copy; the copies go into `copies`)."""
    key = (fn.name, root, offs)
    if key in seen:
        return True
    seen.add(key)
    named = module.named_types
    work, done = [root], set()
    while work:
        v = work.pop()
        if v in done:
            continue
        done.add(v)
        for u in _uses(fn).get(v, ()):
            if u.op in ("getelementptr", "bitcast", "addrspacecast") and u.ops[0].value == v:
                if decompose(module, fn, u.name)[1] is None:
                    return False                # a run-time offset: which field is unknown
                work.append(u.name)
            elif u.op == "load":
                at = decompose(module, fn, v)[1]
                size = type_size(u.ty, named) or 8
                if any(at <= f < at + size for f in offs) and not (u.ty == "ptr" and at in offs):
                    return False                # the field's bits copied as an integer
            elif u.op == "store" and u.ops[1].value == v and u.ops[0].value != v:
                at = decompose(module, fn, v)[1]
                size = type_size(u.ops[0].ty, named) or 8
                if any(at <= f < at + size for f in offs) and not (
                        at in offs and u.ops[0].ty == "ptr" and
                        _constant_root(module, fn, u.ops[0].value, consts, fields)):
                    return False
            elif u.op == "store" and v == root and u.ops[1].value in param_spill_slots(fn):
                work.extend(i.name for i in _uses(fn).get(u.ops[1].value, ())
                            if i.op == "load" and i.name)     # the parameter, reloaded
            elif u.op in ("call", "invoke") and (u.callee or "").startswith(_MARKERS):
                continue
            elif u.op in ("call", "invoke") and u.callee in _FREES and v == root:
                continue
            elif u.op == "call" and (u.callee or "").startswith("@llvm.memcpy") and \
                    copies is not None and _whole_copy(module, fn, u, v, offs, copies, seen):
                continue
            elif u.op in ("call", "invoke") and (u.callee or "").startswith("@") and \
                    module.defines(u.callee) and decompose(module, fn, v)[1] == 0:
                callee = module.function(u.callee)
                ks = [k for k, o in enumerate(u.ops) if o.value == v]
                if callee is None or any(k >= len(callee.params) for k in ks) or not all(
                        _confined(module, callee, callee.params[k].name, offs, set(), {}, seen)
                        for k in ks):
                    return False
            else:
                return False
    return True


def _whole_copy(module, fn, copy, v: str, offs: frozenset, copies: dict, seen: set) -> bool:
    """`copy` (a memcpy) copies the record at v, fields included, to the start of a local or
    a block from malloc/new (_fresh) that nothing else writes (its own uses keep to _confined): the
    copy holds pointers without a shadow at the same offsets. Or it is that copy, seen from
    the destination's side."""
    dst, src, size = (o.value for o in copy.ops[:3])
    if not size.isdigit() or int(size) < max(offs) + 8:
        return False
    if v == dst:
        return copies.get(v) == offs
    d, at = decompose(module, fn, dst)
    if src != v or at != 0 or decompose(module, fn, v)[1] != 0:
        return False
    if not _fresh(fn, d):
        return False
    if d in copies:
        return copies[d] == offs
    copies[d] = offs
    return _confined(module, fn, d, offs, set(), {}, seen, copies)


def _fresh(fn, obj: str) -> bool:
    """obj is a local, or a block this function allocates (malloc, new)."""
    d = fn.defs.get(obj)
    op = getattr(d, "op", None)
    return op == "alloca" or op in ("call", "invoke") and d.callee in _ALLOCATORS
