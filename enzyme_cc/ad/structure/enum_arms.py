"""Tagged unions read on one variant's arm (Rust enums, C records of a tag and a union).

`match s { F(v) => F(v * 0.5), U(k) => U(k / 2) }` reads the payload's bytes as a double on the
arm of one tag value and as an integer on another, and both arms store their result into one
slot. Seen without the tag, the integer arm's load reads memory that holds a double (a float's
bits in an integer), and its arithmetic looks like bit manipulation of a float. When every float
access to those bytes lies on another arm of a branch on a tag read from the same record, the
integer load reads the other variant: integer data, which carries no derivative. Unless the
integer code looks like work on a float's bits: the function computes on its result as a float
(the integer may become a float only to be stored: LLVM merges both arms' stores into one of a
double), or it uses a constant no integer variant's arithmetic needs and every bit trick on a
float does (a sign, exponent or mantissa mask, a magic constant `0x5fe6...`, a shift by 32 or
more: for a 64-bit payload any constant of 2^32 or more; for 32 bits, 2^22 or a shift by 16).
"""
from __future__ import annotations

from enzyme_cc.ir.lexer import is_fp
from .cfg import dominators
from .packed_bits import is_flat_record
from .type_layout import decompose


def integer_variant(module, fn, load, memo: dict) -> bool:
    """The integer load `load` reads a tagged union's integer variant: its bytes are accessed as
    floats only on other arms of a branch on a tag loaded from the same record. memo: the
    caller's, for what depends on fn alone (Activity asks again in each round of its fixed
    point)."""
    key = ("variant", load.name)
    if key not in memo:
        memo[key] = _integer_variant(module, fn, load, memo)
    return memo[key]


def _integer_variant(module, fn, load, memo: dict) -> bool:
    base, off = decompose(module, fn, load.ops[0].value)
    if off is None:
        return False
    floats = [i for i in fn.insts() if _float_access_at(module, fn, i, base, off)]
    if not floats or _bit_work(fn, load.name, memo):
        return False
    return _arm_apart(fn, load.block.label, [(i.block.label, None) for i in floats],
                      lambda c: _is_tag(module, fn, c, base, off), memo)


def integer_arm_use(act, fn, inst, memo: dict) -> bool:
    """Integer code `inst` on a value that carries a float's bits (a tagged union passed or
    returned by value: its payload in an integer register) runs on an arm of a branch whose
    condition does not read that value, every float view of the value (a bitcast to a float, a
    store, a call, a return, a join) lies on other arms of it, and inst's result is not
    computed on as a float: the union's integer variant, no bit manipulation of a float."""
    key = ("arm", id(inst))     # (asked by the rule and by the refusal of bit manipulation)
    if key not in memo:
        memo[key] = _integer_arm_use(act, fn, inst, memo)
    return memo[key]


def _integer_arm_use(act, fn, inst, memo: dict) -> bool:
    vals = [o.value for o in inst.ops if o.value in act.punned]
    if not vals or _float_constant(inst) or inst.name and _bit_work(fn, inst.name, memo):
        return False
    users = memo.get("users") or memo.setdefault("users", fn.users())
    for v in vals:
        # (instruction, the value it uses): a view of v as a float may be hoisted out of the
        # arms (-Og), so its own uses count
        views = [(u, v) for u in users.get(v, ()) if u.op in _VIEWS]
        for u in users.get(v, ()):
            if u.op == "bitcast" and is_fp(u.ty):
                views += [(w, u.name) for w in users.get(u.name, ()) if not _fake_use(w)]
        places = [(p, u.block.label) for u, x in views if u.op == "phi"
                  for w, p in u.incoming if w == x] + \
            [(u.block.label, None) for u, _ in views if u.op != "phi"]
        if not views or not _arm_apart(fn, inst.block.label, places,
                                       lambda c: not _reads(fn, c, v), memo):
            return False
    return True


_VIEWS = ("store", "call", "invoke", "ret", "insertvalue", "phi", "select")


def _arm_apart(fn, here: str, places, is_tag, memo) -> bool:
    """Block `here` lies on an arm of a branch (or switch) on a tag (is_tag(condition)), and
    each of `places` lies on another arm of it (an arm: a successor whose only predecessor is
    the branch's block, and the blocks it dominates). A place: (block, None) for an
    instruction, (predecessor, block) for a phi's incoming value, used on that edge."""
    dom = memo.get("dom") or memo.setdefault("dom", dominators(fn))
    for d in dom[here]:
        term = fn.block(d).term
        if term.op not in ("br", "switch") or not term.ops or not is_tag(term.ops[0].value):
            continue
        arms = [t for t in dict.fromkeys(term.targets)
                if [p.label for p in fn.block(t).preds] == [d]]
        mine = [t for t in arms if t in dom[here]]
        if mine and all(any(t != mine[0] and t in dom[b] for t in arms) or
                        b == d and edge is not None and edge != mine[0] for b, edge in places):
            return True
    return False


def _reads(fn, c: str, v: str, depth: int = 0) -> bool:
    """Value c is computed from v (or may be: deeper than we look)."""
    if c == v:
        return True
    d = fn.defs.get(c)
    if getattr(d, "op", None) is None or d.op in ("load", "call", "invoke", "alloca"):
        return False
    return depth > 8 or any(_reads(fn, o, v, depth + 1) for o in
                            {o.value for o in d.ops if o.value.startswith("%")})


def _float_access_at(module, fn, inst, base, off) -> bool:
    if inst.op == "load" and is_fp(inst.ty):
        ptr = inst.ops[0].value
    elif inst.op == "store" and is_fp(inst.ops[0].ty):
        ptr = inst.ops[1].value
    else:
        return False
    return decompose(module, fn, ptr) == (base, off)


def _is_tag(module, fn, v: str, base, off, depth: int = 0) -> bool:
    """v is computed from an integer loaded from the record `base` at an offset other than
    `off` (the tag): the value itself, a truncation, or a comparison of it with a constant."""
    d = fn.defs.get(v)
    if getattr(d, "op", None) is None or depth > 4:
        return False
    if d.op == "load" and d.ty.startswith("i"):
        b, o = decompose(module, fn, d.ops[0].value)
        return b == base and o is not None and o != off
    if d.op in ("trunc", "zext", "sext") or d.op == "icmp" and not d.ops[1].value.startswith("%"):
        return _is_tag(module, fn, d.ops[0].value, base, off, depth + 1)
    return False


def _bit_work(fn, v: str, memo: dict) -> bool:
    """Integer code on v looks like work on a float's bits: a float-sized constant in it, or
    its result (v's own bits included) viewed as a float that is computed on, returned or
    passed, anything but stored, directly or through phis and selects."""
    users = memo.get("users") or memo.setdefault("users", fn.users())
    seen, todo = {v}, [(v, False)]
    while todo:
        x, as_float = todo.pop()
        for u in users.get(x, ()):
            if not as_float and _float_constant(u):
                return True
            if _fake_use(u):
                continue
            if u.op == "store":
                if u.ops[1].value == x:         # (an address made from the integer)
                    return True
                continue
            if u.op in ("call", "invoke") and not (u.callee or "").startswith("@llvm."):
                return True                     # (a callee could take the bits as a float)
            if u.op in ("phi", "select", "freeze") or not as_float and u.op != "bitcast" and \
                    u.name and not is_fp(u.ty) and u.ty != "ptr":
                nxt = (u.name, as_float)
            elif u.op == "bitcast":
                nxt = (u.name, is_fp(u.ty))     # (a float's bits back to an integer: data)
            elif not as_float and u.op in ("icmp", "sitofp", "uitofp") or u.name is None and \
                    not as_float and u.op not in ("ret", "call", "invoke") or \
                    u.op == "ret" and is_flat_record(u.ops[0].ty):
                continue              # compared, converted to a number, returned in a record
            else:
                return True
            if nxt[0] not in seen:
                seen.add(nxt[0])
                todo.append(nxt)
    return False


def _float_constant(inst) -> bool:
    """An integer instruction with a constant operand of the size a float's masks, magic
    constants and exponent shifts have."""
    bits = {"i64": 64, "i32": 32}.get(inst.ty)
    if bits is None or not inst.ops:
        return False
    big, shift = (1 << 32, 32) if bits == 64 else (1 << 22, 16)
    for o in inst.ops:
        try:
            c = int(o.value)
        except ValueError:
            continue
        if abs(c) >= big or inst.op in ("shl", "lshr", "ashr") and o is inst.ops[1] and c >= shift:
            return True
    return False


def _fake_use(inst) -> bool:
    """-Og's keep-alive of a value for the debugger: no use of its data."""
    return inst.op == "call" and inst.callee == "@llvm.fake.use"
