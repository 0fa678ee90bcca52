"""The blocks a function returns or fills for its caller, and where it keeps a parameter in
them (const_fields): a fresh block (one it allocates and keeps no pointer to, also through
unoptimized code's local slots and a `retval` slot several paths fill), the offset paths at
which it stores a parameter into the block it returns or into its sret record, and the
fields of a record value it returns in registers into which it inserts one.
"""
from __future__ import annotations

from ..structure.local_slots import local_slot_stores
from ..structure.type_layout import underlying
from .record_paths import back_pointers, base, closed, cut

MARKERS = ("@llvm.lifetime", "@llvm.dbg", "@llvm.assume")
FREES = ("@free", "@_ZdlPv", "@_ZdlPvm")
ALLOCATORS = ("@malloc", "@calloc", "@_Znwm")


def returned_block(module, fn) -> str | None:
    """The block every return of fn returns, where fn allocated it (fresh; memoized)."""
    if "_returned_block" not in fn.__dict__:
        rets = returned_values(fn)
        b = rets.pop() if rets and len(rets) == 1 else None
        fn._returned_block = b if b and b.startswith("%") and fresh(module, fn, b) else None
    return fn._returned_block


def returned_values(fn) -> set | None:
    """What fn's returns return, through phis and selects, null aside (an allocator that
    returns null on its failure paths); None past 16."""
    out, todo, done = set(), [i.ops[0].value for i in fn.insts() if i.op == "ret" and i.ops], set()
    while todo:
        v = underlying(fn, todo.pop())
        if v in done:
            continue
        done.add(v)
        d = fn.defs.get(v)
        if getattr(d, "op", None) in ("phi", "select"):
            todo += [o.value for o in (d.ops[1:] if d.op == "select" else d.ops)]
        elif getattr(d, "op", None) == "load" and d.ops[0].value in local_slot_stores(fn):
            todo += local_slot_stores(fn)[d.ops[0].value]   # (unoptimized code's `retval`)
        elif v != "null":
            out.add(v)
        if len(out) > 16:
            return None
    return out


def held_in_result(module, call, k: int, paths) -> set:
    """The paths of the block `call` returns where the callee stores its parameter k (a record
    with `paths`) into the block it returns, at a constant offset."""
    callee = callee_of(module, call)
    if callee is None or k >= len(callee.params) or callee.ret_ty != "ptr":
        return set()
    held = {cut(q + p) for q in held_prefixes(module, callee, k) for p in paths}
    block = returned_block(module, callee)
    return set(closed(held, back_pointers(module, callee, block)))


def held_prefixes(module, fn, k: int, into: str = "ret") -> frozenset:
    """The byte-offset paths in the block fn returns (`into` "ret"), or in the record its sret
    pointer points to ("sret"), at which fn stores its parameter k: (off,) where it stores the
    parameter there, (off, off2) where it stores there a block it allocates holding the
    parameter at off2 (`unique_ptr<Solver>(new Solver{&p, w})`), ... (memoized)."""
    memo = fn.__dict__.setdefault("_held_prefixes", {})
    if (k, into) not in memo:
        block = returned_block(module, fn) if into == "ret" else sret_param(fn)
        param = fn.params[k].name
        memo[(k, into)] = frozenset(_prefixes(module, fn, param, block, 3)) \
            if block and block != param else frozenset()
    return memo[(k, into)]


def _prefixes(module, fn, value: str, block: str, depth: int) -> set:
    """The offset paths in `block` at which fn stores `value`, directly or inside heap blocks
    it allocates (depth: how many such blocks deep)."""
    out = set()
    d = fn.defs.get(block)
    callee = callee_of(module, d) if getattr(d, "op", None) in ("call", "invoke") else None
    for k, o in enumerate(d.ops if callee is not None and depth > 0 else ()):
        if base(module, fn, o.value) == (value, 0) and k < len(callee.params):
            out |= held_prefixes(module, callee, k)    # (a block that a callee filled)
    for inst in fn.insts():
        if inst.op != "store" or inst.ops[0].ty != "ptr":
            continue
        obj, off = base(module, fn, inst.ops[1].value)     # (through a local slot)
        if off is None:
            continue
        if base(module, fn, inst.ops[0].value) == (value, 0) and obj == block:
            out.add((off,))
        elif base(module, fn, inst.ops[0].value) == (value, 0) and depth > 0 and \
                getattr(fn.defs.get(obj), "op", None) in ("call", "invoke") and \
                fresh(module, fn, obj):
            out |= {q + (off,) for q in _prefixes(module, fn, obj, block, depth - 1)}
    return out


def sret_param(fn) -> str | None:
    """The name of fn's hidden result pointer (a record returned through `sret(T)`), or None."""
    return next((p.name for p in fn.params if "sret" in p.attrs), None)


def held_in_sret(module, call, k: int, paths) -> dict:
    """{the position of the callee's sret argument: the paths of the record the caller passes
    there} where the callee
    stores its parameter k (a record with `paths`) into that record (a factory returning a
    record that keeps the address: `Solver make_solver(const Problem &)`)."""
    callee = callee_of(module, call)
    j = next((j for j, p in enumerate(callee.params) if "sret" in p.attrs), None) \
        if callee else None
    if j is None or j >= len(call.ops) or k >= len(callee.params):
        return {}
    held = closed({cut(q + p) for q in held_prefixes(module, callee, k, "sret") for p in paths},
                  back_pointers(module, callee, sret_param(callee)))
    return {j: held} if held else {}


def inserted_at(module, callee, k: int) -> frozenset:
    """The indices of the record value callee returns (`{ ptr, double }` in registers) into
    which it inserts its parameter k itself, where every return returns such a record built
    by insertvalue (memoized)."""
    memo = callee.__dict__.setdefault("_inserted_at", {})
    if k not in memo:
        param, idx = callee.params[k].name, set()
        for r in (i for i in callee.insts() if i.op == "ret" and i.ops):
            v = r.ops[0].value
            for _ in range(16):
                d = callee.defs.get(v)
                if getattr(d, "op", None) != "insertvalue":
                    break
                if d.ops[1].value == param and len(d.indices) == 1:
                    idx.add(d.indices[0])
                v = d.ops[0].value
        memo[k] = frozenset(idx)
    return memo[k]


def callee_of(module, call):
    name = call.callee or ""
    return module.function(name) if name.startswith("@") and module.defines(name) else None


def fresh(module, fn, obj: str) -> bool:
    """obj is a local, or a block this function allocates (malloc, new, or a function with
    bitcode that returns a block it allocated and kept no pointer to: GSL's
    gsl_root_fsolver_alloc)."""
    d = fn.defs.get(obj)
    op = getattr(d, "op", None)
    return op == "alloca" or op in ("call", "invoke") and (
        d.callee in ALLOCATORS or returns_fresh(module, d.callee or "", 3))


def returns_fresh(module, name: str, depth: int) -> bool:
    """The function returns a block it allocates, whose address it only stores into, loads
    from, compares and frees (memoized per module)."""
    memo = module.__dict__.setdefault("_returns_fresh", {})
    if name not in memo:
        memo[name] = False
        fn = module.function(name) if name.startswith("@") and module.defines(name) else None
        if fn is not None and fn.ret_ty == "ptr" and depth > 0:
            blocks = returned_values(fn)
            memo[name] = bool(blocks) and all(
                getattr(fn.defs.get(b), "op", None) == "call" and
                (fn.defs[b].callee in ALLOCATORS or
                 returns_fresh(module, fn.defs[b].callee or "", depth - 1)) and
                kept_private(module, fn, b) for b in blocks)
    return memo[name]


def kept_private(module, fn, block: str, depth: int = 2) -> bool:
    """No pointer to block leaves fn but by its return (handed to a function with bitcode
    that keeps it private too, `depth` calls deep: GSL's driver_free on a failure path)."""
    work, done = [block], set()
    while work:
        v = work.pop()
        if v in done:
            continue
        done.add(v)
        for u in uses(fn).get(v, ()):
            if u.op in ("getelementptr", "bitcast", "addrspacecast") and u.ops[0].value == v:
                work.append(u.name)
            elif u.op in ("phi", "select") and u.ty == "ptr":
                work.append(u.name)
            elif u.op == "store" and u.ops[0].value == v and \
                    u.ops[1].value in local_slot_stores(fn):
                work += slot_loads(fn, u.ops[1].value)     # (a local variable, unoptimized)
            elif not (u.op in ("load", "icmp", "ret") or
                      u.op == "store" and u.ops[1].value == v and u.ops[0].value != v or
                      u.op == "call" and (u.callee in FREES or
                                          (u.callee or "").startswith(MARKERS)) or
                      _filled(u, v) or _private_call(module, u, v, depth)):
                return False
    return True


def slot_loads(fn, slot: str) -> list:
    """The values read from a local slot that only stores fill and loads read."""
    return [i.name for i in uses(fn).get(slot, ()) if i.op == "load" and i.name]


def return_slot(fn, slot: str) -> bool:
    """slot is a local slot that only stores fill, whose every load fn only returns."""
    return slot in local_slot_stores(fn) and all(
        u.op == "ret" for v in slot_loads(fn, slot) for u in uses(fn).get(v, ()))


def _filled(call, v: str) -> bool:
    """call copies into v or sets its bytes, and takes v for nothing else (GSL's allocators
    copy the caller's parameter record into the block they return)."""
    return (call.callee or "").startswith(("@llvm.memcpy", "@llvm.memmove", "@llvm.memset")) \
        and call.ops[0].value == v and all(o.value != v for o in call.ops[1:])


def _private_call(module, call, v: str, depth: int) -> bool:
    """call hands v to a function with bitcode, whose parameters there keep it private and
    which returns nothing (a destructor or a `free` of its own)."""
    callee = callee_of(module, call) if call.op == "call" and depth > 0 else None
    if callee is None or callee.ret_ty != "void" or call.callee == v:
        return False
    ks = [k for k, o in enumerate(call.ops) if o.value == v]
    return all(k < len(callee.params) and
               kept_private(module, callee, callee.params[k].name, depth - 1) for k in ks)


def uses(fn) -> dict:
    """fn.users(), computed once per function here (the analysis does not rewrite fn)."""
    memo = fn.__dict__.get("_users")
    if memo is None:
        memo = fn._users = fn.users()
    return memo
