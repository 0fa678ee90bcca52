"""File-scope globals whose pointer slots hold heap blocks (`static double *work;`, or jl's
`static buffer static_buffer;` whose `ptr` field its reserve function grows): which slots they
are, whether the call tree writes float data into their blocks, and their shadows' blocks at a
derivative's entry.

The global's address may be passed on (`buffer_reserve(&static_buffer, n)`, or `buf ? buf :
&static_buffer` handed to a function): the walk follows it through GEPs, selects and phis and
into the parameters of functions with a body. Every store through any pointer that may hold
that address counts as a store into the global (the same function stores into other buffers
too: the conclusion only gets more conservative). Where the address escapes otherwise (stored
to memory, returned, converted to an integer, given to a function without a body), no slot is
proven.
"""
from __future__ import annotations

import re

from enzyme_cc.ir.lexer import carries_float, type_size
from ..structure.type_layout import (underlying, decompose, global_type, global_named,
                                     named_expand, constant_gep)
from ..analysis.activity_basics import FREES
from ..structure.cfg import always_passes
from .global_addresses import resolve
from enzyme_cc.rules.call_kinds import ALLOC, STRING_CREATE

# allocation functions -> the deallocator of their blocks (whose size malloc_usable_size gives):
# the C and C++ allocators rules/call_kinds.py knows (not std::string's _M_create), and realloc
_HEAP_FAMILIES = {name: free for name, (_, free) in ALLOC.items() if name != STRING_CREATE} | \
    {"@realloc": "@free"}
_ALLOCATE = {"@free": "@malloc", "@_ZdlPv": "@_Znwm", "@_ZdaPv": "@_Znam"}
_JOIN = ("getelementptr", "bitcast", "addrspacecast", "select", "phi")


def address_users(module, g: str) -> dict | None:
    """{function: the values in it that may hold g's address} over the functions that use it,
    or None where the address escapes (see the module doc)."""
    cache = module.__dict__.setdefault("_heap_slot_users", {})
    if g not in cache:
        cache[g] = _address_users(module, g)
    return cache[g]


def _address_users(module, g: str) -> dict | None:
    word = re.compile(re.escape(g) + r"(?![-\w.$])")
    params: dict[str, set] = {}             # function -> its parameters that may hold g
    work = [f for f, (lo, hi) in module._bodies.items()
            if any(word.search(x) for x in module._lines[lo + 1:hi])]
    out: dict[str, set] = {}
    while work:
        f = work.pop()
        fn = module.function(f)
        held = set(params.get(f, ()))

        def holds(v):
            return v in held or (not v.startswith("%") and bool(word.search(v)))
        slots: set = set()                  # locals the address is kept in (unoptimized code)
        grew = True
        while grew:                         # (phis name values defined further down)
            grew = False
            for inst in fn.insts():
                if inst.name in held or inst.op not in _JOIN + ("load", "store"):
                    continue
                if inst.op == "store":
                    local = inst.ops[1].value
                    if holds(inst.ops[0].value) and local not in slots and \
                            getattr(fn.defs.get(local), "op", None) == "alloca":
                        slots.add(local)
                        grew = True
                elif inst.ty == "ptr" and (inst.op == "load" and inst.ops[0].value in slots or
                                           inst.op != "load" and any(holds(o.value) for o in (
                                               inst.ops if inst.op in ("select", "phi") else
                                               inst.ops[:1]))):
                    held.add(inst.name)
                    grew = True
        for inst in fn.insts():
            at = [k for k, o in enumerate(inst.ops) if holds(o.value)]
            if slots and inst.op not in ("load", "store") and \
                    any(o.value in slots for o in inst.ops) and \
                    not (inst.callee or "").startswith("@llvm.lifetime."):
                return None                 # the local holding the address, passed on
            if not at or inst.op in _JOIN and inst.name in held or inst.op == "icmp":
                continue
            if inst.op == "load" and at == [0] or inst.op == "store" and at == [1] or \
                    inst.op == "store" and at == [0] and inst.ops[1].value in slots:
                continue
            if inst.op not in ("call", "invoke") or not module.defines(inst.callee or ""):
                return None                 # stored, returned, an integer, a body we cannot see
            callee = module.function(inst.callee)
            if len(inst.ops) > len(callee.params):
                return None                 # (through a variadic part)
            for k in at:
                name = callee.params[k].name
                if name not in params.setdefault(inst.callee, set()):
                    params[inst.callee].add(name)
                    work.append(inst.callee)
        out[f] = held | {g}
    return out


def _holds(users_f: set, g: str, v: str) -> bool:
    return v in users_f or (not v.startswith("%") and global_named(v) == g)


def _offset(module, fn, v: str) -> int | None:
    """The constant byte offset of pointer v from the object it points into (a constant GEP of
    a global included), or None."""
    if v.startswith("getelementptr"):
        cg = constant_gep(module, v)
        return cg[1] if cg else None
    return decompose(module, fn, v)[1]


def heap_slots(module, g: str, reach=()) -> dict[int, str]:
    """{offset: deallocator} of the pointer slots of a file-scope global g that only ever hold
    a heap block or null (`static double *work;` grown where short; a field of a struct whose
    address the program passes to the function that grows it): every store that may land in g
    stores null or an allocation's result at a constant offset, or data of another kind at
    other offsets, g's address does not escape (address_users), and its initializer holds
    null. A function a derivative may run (reach) that frees what it read from a slot must
    store into that slot on every path after the free (`delete[] work; work = new
    double[n];`): else the shadow slot would be left pointing at a freed block, which
    shadow_of_heap_block frees at the next entry. A block allocated before a derivative starts
    (by the primal, or a derivative before) gets a shadow block at entry; other slots keep a
    null shadow. The blocks stored in a slot come from one allocator family (malloc's or
    operator new's or new[]'s), whose deallocator is given. Empty where any of this fails."""
    line = module.globals.get(g, "")
    if not re.match(r"@\S+ = (?:internal|private) ", line) or \
            not re.search(r" global (?:ptr null|\S+ zeroinitializer)\b", line) or \
            "ptr" not in named_expand(global_type(module, g) or "", module.named_types):
        return {}
    users = address_users(module, g)
    if users is None:
        return {}
    fresh: dict[int, set] = {}       # slot -> the deallocators of what is stored there
    other: list = []                 # (offset, bytes) of the stores of other data
    for f, held in users.items():
        fn = module.function(f)
        loaded, stores, frees = {}, {}, []      # load -> slot; slot -> blocks; (free, slot)
        for inst in fn.insts():
            if inst.op == "load" and _holds(held, g, inst.ops[0].value):
                off = _offset(module, fn, inst.ops[0].value)
                if off is None:
                    return {}
                loaded[inst.name] = off
            elif inst.op == "store" and _holds(held, g, inst.ops[1].value):
                off = _offset(module, fn, inst.ops[1].value)
                if off is None:
                    return {}
                if inst.ops[0].ty != "ptr":
                    other.append((off, type_size(inst.ops[0].ty, module.named_types)))
                    continue
                v, src = inst.ops[0].value, fn.defs.get(inst.ops[0].value)
                if v != "null":
                    callee = getattr(src, "callee", None) if getattr(src, "op", None) in (
                        "call", "invoke") else None
                    fresh.setdefault(off, set()).add(
                        None if callee is None else _allocated_by(module, callee))
                stores.setdefault(off, []).append(inst)
            elif inst.op in ("call", "invoke") and inst.callee in FREES and f in reach and \
                    inst.ops:
                freed = underlying(fn, inst.ops[0].value)
                # (a block read from the slot, or one this function stored there: at -O2
                # `work = malloc(n); ...; free(work)` frees the malloc's value)
                slot = loaded.get(freed, next((off for off, sts in stores.items()
                                               if any(st.ops[0].value == freed for st in sts)),
                                              None))
                if slot is not None:
                    frees.append((inst, slot))
        for free, off in frees:
            if not _stored_after(fn, free, stores.get(off, [])):
                fresh.setdefault(off, set()).add(None)
    # one family per slot: its shadow is allocated and freed as the primal's blocks are
    return {off: fam.pop() for off, fam in fresh.items() if len(fam) == 1 and None not in fam
            and not any(o < off + 8 and off < o + (n or 1) for o, n in other)}


def floats_written_through(module, g: str, reach) -> bool:
    """Some function of the call tree stores float data through a pointer it loads from g's
    slots (itself, or a callee it passes that pointer to, through that parameter; a call
    through a function pointer may, too)."""
    users = address_users(module, g) or {}
    for f in sorted(set(reach) & set(users)):
        fn, held = module.function(f), users[f]
        loaded = {i.name for i in fn.insts() if i.op == "load" and i.ty == "ptr" and
                  _holds(held, g, i.ops[0].value)}
        if not loaded:
            continue
        if _stores_floats_through(fn, loaded):
            return True
        for inst in fn.insts():
            if inst.op not in ("call", "invoke"):
                continue
            passed = [k for k, o in enumerate(inst.ops) if resolve(fn, o.value) in loaded]
            if passed and (inst.callee or "%").startswith("%"):
                return True                         # (jl's gs_aux: gsh->r.exec(..., buf->ptr))
            if passed and module.defines(inst.callee or ""):
                callee = module.function(inst.callee)
                params = {callee.params[k].name for k in passed if k < len(callee.params)}
                if params and _stores_floats_through(callee, params):
                    return True
    return False


def _stores_floats_through(fn, bases: set) -> bool:
    # (resolve: unoptimized code keeps the pointer in a local first)
    return bool(bases) and any(
        inst.op == "store" and carries_float(inst.ops[0].ty) and
        resolve(fn, inst.ops[1].value) in bases for inst in fn.insts())


def _allocated_by(module, callee: str) -> str | None:
    """The deallocator of the blocks a call of callee returns: an allocator's, or that of the
    allocator whose fresh block every return of the program's own wrapper passes on (miniAMR's
    ma_malloc counts and checks, then returns malloc's); None when unknown."""
    if not module.defines(callee):
        return _HEAP_FAMILIES.get(callee)
    fn, found = module.function(callee), set()
    for inst in fn.insts():
        if inst.op == "ret":
            d = fn.defs.get(resolve(fn, inst.ops[0].value)) if inst.ops else None
            c = getattr(d, "callee", None) if getattr(d, "op", None) in ("call", "invoke") \
                else None
            found.add(None if c is None or module.defines(c) else _HEAP_FAMILIES.get(c))
    return found.pop() if len(found) == 1 else None


def _stored_after(fn, inst, stores) -> bool:
    """Whether every path from inst to a return passes one of the stores."""
    b = inst.block
    if any(s.block is b and b.insts.index(s) > b.insts.index(inst) for s in stores):
        return True
    via = {s.block.label for s in stores}
    return b.term.op != "ret" and bool(b.term.targets) and \
        all(always_passes(fn, t, via) for t in b.term.targets)


def shadow_of_heap_block(gen, g: str, sg: str, tmp, free: str) -> list[str]:
    """The shadow slot sg of heap slot g (heap_slots): a zeroed block of the primal block's
    usable size from the allocator the primal's blocks come from (free: its deallocator), where
    the primal holds one on entry; null where it holds none. The next derivative call's entry
    frees it (or the block this derivative replaced it with)."""
    alloc = _ALLOCATE[free]
    gen.declare_raw(alloc, f"declare noalias ptr {alloc}(i64)")
    gen.declare_raw("@malloc_usable_size", "declare i64 @malloc_usable_size(ptr)")
    p, none, n, buf = tmp(), tmp(), tmp(), tmp()
    label = tmp()[2:]
    yes, done = f"heap.alloc.{label}", f"heap.done.{label}"
    out = [f"{p} = load ptr, ptr {g}", f"{none} = icmp eq ptr {p}, null",
           f"br i1 {none}, label %{done}, label %{yes}", f"{yes}:",
           f"{n} = call i64 @malloc_usable_size(ptr {p})", f"{buf} = call ptr {alloc}(i64 {n})"]
    gen.zero_memory(out.append, buf, n)
    return out + [f"store ptr {buf}, ptr {sg}", f"br label %{done}", f"{done}:"]
