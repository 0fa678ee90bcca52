"""What a loop outlined by loop_checkpoint.py writes, and the extent of each object: the
snapshot regions of a checkpointed loop (the other memory a fixed-point step writes). Globals are
the driver's; objects the step allocates itself need nothing; the others must be stack objects
or heap blocks allocated before the loop with a known size, or be given an extent with
`__enzyme_ptr_size_hint(ptr, bytes)` before it."""
from __future__ import annotations

import re

from enzyme_cc.ir.lexer import type_size
from ..structure.cfg import dominators
from ..structure.type_layout import underlying

_ALLOCS = {"@malloc": 1, "@_Znwm": 1, "@_Znam": 1, "@calloc": 2}
_HINT = re.compile(r"__enzyme_ptr_size_hint")


def regions(o) -> list[tuple[str, str]]:
    out: dict[str, str] = {}
    for b in o._blocks():
        for inst in b.insts:
            for ptr in _written(o, inst):
                _region(o, ptr, inst, out, 0)
    # memory the loop only reads but the function writes after it: the reverse sweep
    # recomputes steps later, so the snapshots must hold it too
    after, todo = set(), [o.E.label]
    while todo:
        lab = todo.pop()
        if lab in after or lab in o.L.blocks:
            continue
        after.add(lab)
        todo += o.fn.block(lab).term.targets
    later = {base_of(o.fn, ptr) for lab in after for inst in o.fn.block(lab).insts
             for ptr in _written(o, inst)}
    for b in o._blocks():
        for inst in b.insts:
            ptrs = [inst.ops[0].value] if inst.op == "load" else \
                [x.value for x in inst.ops if x.ty == "ptr"] if inst.op == "call" and \
                not id(inst) in o.markers and not _HINT.search(inst.callee or "") else []
            for ptr in ptrs:
                if base_of(o.fn, ptr) in later and not o.inside(base_of(o.fn, ptr)):
                    _region(o, ptr, inst, out, 0)
    return list(out.items())


def _written(o, inst):
    if inst.op == "store":
        return [inst.ops[1].value]
    if inst.op in ("atomicrmw", "cmpxchg"):
        return [inst.ops[0].value]
    if inst.op not in ("call", "invoke") or id(inst) in o.markers:
        return []
    callee = inst.callee or ""
    if re.match(r"@llvm\.(memcpy|memmove|memset)", callee):
        return [inst.ops[0].value]
    if callee.startswith("@llvm.") or _HINT.search(callee):
        return []
    hidden = _hidden_write(o.m, callee, set())
    if hidden:
        o.fail(f"'{callee[1:]}', called in the loop, writes memory through '{hidden}', a pointer "
               "it loads or is handed back, whose object and extent enzyme-cc cannot see "
               "from the loop; inline it, or write the loop as __enzyme_checkpoint_for")
    return [x.value for k, x in enumerate(inst.ops)
            if x.ty == "ptr" and may_write_arg(o.m, callee, k)]


def _hidden_write(module, name: str, seen: set) -> str | None:
    """A pointer a function of the module (or one it calls) writes through that is none of its
    parameters, locals, globals or fresh allocations: memory a snapshot of the loop's regions
    would miss (the existing checkpoint API leaves this to the program; here it is checked)."""
    fn = module.function(name) if name.startswith("@") and name not in seen else None
    if fn is None or len(seen) > 64:
        return None
    seen.add(name)
    params = {p.name for p in fn.params}
    for inst in fn.insts():
        ptrs = []
        if inst.op == "store":
            ptrs = [inst.ops[1].value]
        elif inst.op in ("atomicrmw", "cmpxchg"):
            ptrs = [inst.ops[0].value]
        elif inst.op in ("call", "invoke"):
            c = inst.callee or ""
            if re.match(r"@llvm\.(memcpy|memmove|memset)", c):
                ptrs = [inst.ops[0].value]
            elif not c.startswith("@llvm."):
                deep = _hidden_write(module, c, seen)
                if deep:
                    return deep
                ptrs = [x.value for k, x in enumerate(inst.ops)
                        if x.ty == "ptr" and module.function(c) is None
                        and may_write_arg(module, c, k)]
        for ptr in ptrs:
            if not all(_visible(fn, params, r) for r in _roots(fn, base_of(fn, ptr), set())):
                return ptr
    return None


def _roots(fn, b: str, seen: set) -> set:
    """The objects a pointer may be based on, through phis and selects."""
    d = fn.defs.get(b)
    op = getattr(d, "op", None)
    if op not in ("phi", "select") or b in seen:
        return set() if b in seen else {b}
    seen.add(b)
    out = set()
    for x in (d.ops[1:] if op == "select" else d.ops):
        out |= _roots(fn, base_of(fn, x.value), seen)
    return out


def _visible(fn, params, b: str) -> bool:
    d = fn.defs.get(b)
    op = getattr(d, "op", None)
    return b in params or b.startswith("@") or op == "alloca" or b in ("null", "undef", "poison") \
        or (op == "call" and d.callee in _ALLOCS) or not b.startswith("%")


def _region(o, ptr, inst, out, depth):
    fn = o.fn
    base = base_of(fn, ptr)
    if any(base_of(fn, z) == base for z, _ in o.states):
        return                                      # the fixed point's state
    if base.startswith("@") or base in out or base in ("null", "undef", "poison"):
        return                                      # globals: the driver snapshots them
    d = fn.defs.get(base)
    op = getattr(d, "op", None)
    if o.inside(base):
        if op == "alloca" or (op == "call" and d.callee in _ALLOCS):
            return                                  # made by the step itself
        iv = next((af for phi, af in o.ivs if phi.name == base), None)
        if iv and depth < 8:
            return _region(o, iv[0], inst, out, depth + 1)
    elif op == "alloca":
        size = type_size(d.src_ty, o.m.named_types)
        if d.ops:
            n = f"{o.p}an{len(out)}"
            o.pre.append(f"{n} = mul i64 {i64(o, d.ops[0])}, {size}")
            size = n
        out[base] = str(size)
        return
    elif op == "call" and d.callee in _ALLOCS:
        sz = i64(o, d.ops[0])
        if _ALLOCS[d.callee] == 2:
            n = f"{o.p}cn{len(out)}"
            o.pre.append(f"{n} = mul i64 {sz}, {i64(o, d.ops[1])}")
            sz = n
        out[base] = sz
        return
    else:
        hint = _hint(o, base)
        if hint:
            out[base] = hint
            return
    o.fail(f"the loop writes memory through '{ptr}' whose extent enzyme-cc cannot know "
           f"(instruction '{str(inst)[:100]}'); give it with __enzyme_ptr_size_hint(ptr, "
           "bytes) before the loop")


def _hint(o, base):
    dom = dominators(o.fn)
    for inst in o.fn.insts():
        if inst.op == "call" and _HINT.search(inst.callee or "") and len(inst.ops) >= 2 \
                and underlying(o.fn, inst.ops[0].value) == base \
                and inst.block.label in dom[o.P.label]:
            if len(inst.ops) > 2 and inst.ops[2].value != "0":
                o.fail("__enzyme_ptr_size_hint of device memory (a memory space other "
                       "than 0) is not supported")
            return i64(o, inst.ops[1])
    return None


def base_of(fn, ptr: str) -> str:
    """typeinfo.underlying, also through constant GEP expressions of a global."""
    if not ptr.startswith(("%", "@")):
        g = re.search(r"ptr (@[-\w.$]+|@\"[^\"]*\")", ptr)
        return g.group(1) if g else ptr
    return underlying(fn, ptr)


def i64(o, operand) -> str:
    if operand.ty == "i64":
        return operand.value
    n = f"{o.p}z{len(o.pre)}"
    o.pre.append(f"{n} = zext {operand.ty} {operand.value} to i64")
    return n


def may_write_arg(module, callee: str, k: int) -> bool:
    """Whether a call of callee may write through its k-th argument (attributes say not)."""
    fn = module.function(callee) if callee.startswith("@") else None
    decl = module.declarations.get(callee, "")
    group = fn.attr_group if fn else (re.search(r"#\d+", decl.split(")")[-1]) or [None])[0]
    attrs = module.attr_groups.get(group or "", "")
    mem = re.search(r"memory\(([^)]*)\)", attrs + (fn.header if fn else decl))
    if mem and ("write" not in mem.group(1) or mem.group(1) == "none"):
        if "argmem: readwrite" not in mem.group(1) and "argmem: write" not in mem.group(1):
            return False
    if fn and k < len(fn.params):
        return not any(a in ("readonly", "readnone") for a in fn.params[k].attrs)
    return True
