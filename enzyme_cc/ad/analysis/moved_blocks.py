"""Copies that move memory the program frees afterwards without reading the copied bytes again:
an allocator's realloc (`q = malloc(n); memcpy(q, p, k); free(p)`), and a container's
relocation loop (std::vector growing: each element moved into the new block, the old block
freed after). Their adjoint can move the shadow bytes back whatever their type, which is what
a type-erased element needs (std::function's `_Any_data` holds a lambda's doubles or
pointers: nothing in the IR says which)."""
from __future__ import annotations

from enzyme_cc.ir.lexer import type_size
from ..structure.call_targets import keep_no_copy
from ..structure.type_layout import decompose
from .activity_basics import ALLOCATORS, FREES
from .typeinfo import call_targets

# instructions that neither read memory nor leave the function
_CALLS_THAT_DO_NOT_READ = ("@llvm.lifetime", "@llvm.dbg", "@llvm.assume", "@llvm.memset",
                           "@llvm.experimental.noalias.scope.decl")
_MEMORY = ("load", "store", "call", "invoke", "atomicrmw", "cmpxchg", "va_arg")


def address_key(module, fn, v: str, depth=0):
    """What pointer v is, up to reloading: the same SSA value, or a load of the same address
    (unoptimized code reloads `v->data` before the free)."""
    d = fn.defs.get(v)
    if depth > 8 or getattr(d, "op", None) != "load":
        return v
    base, off = decompose(module, fn, d.ops[0].value)
    return ("load", address_key(module, fn, base, depth + 1), off)


def moves_freed_block(module, fn, inst) -> bool:
    """The copy's source is never read again before the block holding it is freed."""
    return _freed_straight_after(module, fn, inst) or _relocation_loop(module, fn, inst) or \
        _local_block_not_read_again(module, fn, inst)


def _local_block_not_read_again(module, fn, inst) -> bool:
    """The source lies in a block this function allocates, whose address goes nowhere but to
    address arithmetic, copies, memset, its free and calls that keep no copy of it (it escapes
    to no store, return or capturing call), and no path from the copy reads it again, itself or
    through a call (a message packed at run-time offsets with integers and doubles, copied to
    another buffer and unpacked from that one; a halo exchange whose buffers are packed by
    functions it reaches through pointers)."""
    root, _ = decompose(module, fn, inst.ops[1].value)
    d = fn.defs.get(root)
    if getattr(d, "op", None) not in ("call", "invoke") or d.callee not in ALLOCATORS:
        return False
    users, derived, work = fn.users(), {root}, [root]
    while work:
        for u in users.get(work.pop(), ()):
            if u.op in ("getelementptr", "bitcast", "phi", "select") and u.name not in derived:
                derived.add(u.name)
                work.append(u.name)
            elif u.op in ("ret", "invoke", "ptrtoint") or u.op == "call" and not (
                    _memory_intrinsic(u) or u.callee in FREES or
                    _keeps_no_copy(module, u, derived)) \
                    or u.op == "store" and u.ops[0].value in derived:
                return False                  # (its address escapes: another may read it)

    def reads(i) -> bool:
        if i.op == "load":
            return i.ops[0].value in derived
        if i.op == "call" and (i.callee or "").startswith(("@llvm.memcpy", "@llvm.memmove")):
            return i.ops[1].value in derived
        if i.op == "call" and not _memory_intrinsic(i) and i.callee not in FREES:
            return any(o.value in derived for o in i.ops)    # (the callee may read it)
        return False

    def scan(insts):
        for i in insts:
            if i.op == "call" and i.callee in FREES and i.ops and i.ops[0].value in derived:
                return True, []               # (freed: this path is done)
            if reads(i):
                return False, []
        return True, list(insts[-1].targets)

    return _every_path(fn, inst, scan)


def _memory_intrinsic(call) -> bool:
    return (call.callee or "").startswith(("@llvm.memcpy", "@llvm.memmove", "@llvm.memset",
                                           *_CALLS_THAT_DO_NOT_READ))


def _keeps_no_copy(module, call, derived) -> bool:
    """Every function the call may reach (its callee, or an indirect call's possible targets)
    keeps no copy of the addresses in `derived` it is handed (`captures(none)`)."""
    if call.callee in derived:
        return False
    return keep_no_copy(module, call_targets(module, call),
                        [k for k, o in enumerate(call.ops) if o.value in derived])


def _every_path(fn, inst, scan) -> bool:
    """scan(instructions of a block) -> (path safe so far, successor labels to follow) holds on
    every path from just after inst."""
    stack, seen = [(inst.block, inst.block.insts.index(inst) + 1)], set()
    while stack:
        blk, start = stack.pop()
        if (blk.label, start) in seen:
            continue
        seen.add((blk.label, start))
        ok, succ = scan(blk.insts[start:])
        if not ok:
            return False
        stack += [(fn.block(t), 0) for t in succ]
    return True


def _freed_straight_after(module, fn, inst) -> bool:
    """The source block is freed right after the copy, on its way out (nothing but loads,
    address arithmetic, markers, phis and unconditional branches in between: an allocator's
    own realloc, as in Rust's over-aligned reallocation)."""
    src = address_key(module, fn, inst.ops[1].value)
    blk, seen = inst.block, set()
    insts = blk.insts[blk.insts.index(inst) + 1:]
    while True:
        for nxt in insts:
            c = nxt.callee or ""
            if nxt.op in ("phi", "getelementptr", "bitcast") or nxt.op == "load" and \
                    "volatile" not in nxt.flags or nxt.op == "call" and c.startswith(
                    ("@llvm.lifetime", "@llvm.dbg", "@llvm.assume")):
                continue
            if nxt is blk.term and nxt.op == "br" and len(blk.term.targets) == 1:
                break
            return nxt.op == "call" and c in FREES and bool(nxt.ops) and \
                address_key(module, fn, nxt.ops[0].value) == src
        target = blk.term.targets[0]
        if target in seen:
            return False
        seen.add(target)
        blk = fn.block(target)
        insts = blk.insts


def _induction(module, fn, v: str):
    """(phi, start, stride) for a pointer phi that a loop advances by a constant positive stride
    (`p = phi [start, entry], [p + stride, latch]`), else None."""
    d = fn.defs.get(v)
    if getattr(d, "op", None) != "phi" or len(d.incoming) != 2:
        return None
    (a, _), (b, _) = d.incoming
    for start, step in ((a, b), (b, a)):
        base, stride = decompose(module, fn, step)
        if base == v and stride and stride > 0:
            return v, start, stride
    return None


def _relocation_loop(module, fn, inst) -> bool:
    """The copy moves one element of a run that a loop walks upwards (its source an induction
    pointer p + c, the stride past the copied bytes), and every path from it reaches the free of
    the run's block without a read of this element's copied bytes, of an element before it, or
    of the block through another pointer than a later loop continuing where this one stopped
    (std::vector's relocation on growth: the elements before the insertion point, then those
    after it)."""
    try:
        length = int(inst.ops[2].value)
    except ValueError:
        return False
    base, off = decompose(module, fn, inst.ops[1].value)
    ind = _induction(module, fn, base)
    if ind is None or off is None or off < 0 or off + length > ind[2]:
        return False
    root = address_key(module, fn, ind[1])
    bounds = _exit_bounds(module, fn, base)
    later = {base}        # induction pointers whose reads lie after every byte moved so far
    return _every_path(fn, inst, lambda insts: _scan(module, fn, insts, inst, base, off, length,
                                                      root, bounds, later, ind[2]))


def _exit_bounds(module, fn, p: str) -> set:
    """The values the loop of induction pointer p compares its next value with (where the run
    it walks ends), as keys."""
    out = set()
    for i in fn.insts():
        if i.op == "icmp" and len(i.ops) == 2:
            vals = [o.value for o in i.ops]
            for k, v in enumerate(vals):
                b, o = decompose(module, fn, v)
                if b == p and o:
                    out.add(address_key(module, fn, vals[1 - k]))
    return out


def _scan(module, fn, insts, copy, base, off, length, root, bounds, later, stride):
    """(path safe so far, successor labels to follow) for the instructions of one block."""
    for i in insts:
        if i is copy:
            return True, []                   # the next element's move: this one is done
        if i.op == "call" and i.callee in FREES and i.ops and \
                address_key(module, fn, i.ops[0].value) == root:
            return True, []
        if i.op == "load" or i.op == "call" and (i.callee or "").startswith(
                ("@llvm.memcpy", "@llvm.memmove")):
            if "volatile" in i.flags:
                return False, []
            src = i.ops[0].value if i.op == "load" else i.ops[1].value
            width = type_size(i.ty, module.named_types) if i.op == "load" else \
                int(i.ops[2].value) if i.ops[2].value.isdigit() else stride
            if not _reads_elsewhere(module, fn, src, width or stride, base, off, length, root,
                                    bounds, later, stride):
                return False, []
            continue
        if i.op == "call" and (i.callee or "").startswith(_CALLS_THAT_DO_NOT_READ):
            continue
        if i.op in ("ret", "resume", "invoke", "callbr") or i.op in _MEMORY and i.op != "store":
            return False, []
        if i.op == "br" and len(i.targets) == 2 and i.ops:
            null_test = _null_test(module, fn, i.ops[0].value, root)
            if null_test is not None:         # the copied-from block is not null
                return True, [i.targets[1] if null_test == "eq" else i.targets[0]]
        if i.op == "unreachable":
            return True, []
    return True, list(insts[-1].targets) if insts else []


def _reads_elsewhere(module, fn, ptr, width, base, off, length, root, bounds, later,
                     stride) -> bool:
    """A read of width bytes at ptr, after the copy, touches none of the bytes moved so far."""
    b, o = decompose(module, fn, ptr)
    if b == base:
        # this element's other bytes, or a later element's (the walk only goes up)
        return o is not None and 0 <= o and o + width <= stride and \
            not (off < o + width and o < off + length)
    ind = _induction(module, fn, b)
    if ind is not None and address_key(module, fn, ind[1]) in bounds and o is not None \
            and o >= 0:
        later.add(b)
        return True                           # a later loop starting where this one ended
    if b in later and o is not None and o >= 0:
        return True
    return address_key(module, fn, b) != root and b != root


def _null_test(module, fn, cond: str, root):
    d = fn.defs.get(cond)
    if getattr(d, "op", None) != "icmp" or len(d.ops) != 2:
        return None
    a, b = (o.value for o in d.ops)
    pred = d.pred if d.pred in ("eq", "ne") else None
    if pred and b == "null" and address_key(module, fn, a) == root:
        return pred
    return None
