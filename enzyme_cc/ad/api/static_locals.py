"""C++ function-local statics initialized at run time (`static auto table = make();`, guarded by
`__cxa_guard_acquire` on `_ZGV<name>`): lookup tables and caches of constants.

A derivative that runs after the function's first call finds the static built by the primal,
while the static's shadow (a global written in the call tree gets one, zeroed at the
derivative's entry) has none of the blocks the static points to: reading the static's data as
active went through a null shadow. A static whose initializer reads nothing its function was
given (no parameter, no value computed before the guard) and which nothing writes after the
initialization is a constant of the program: inactive, as `enzyme_inactive` on it makes it.
Others keep the general treatment (an initializer computed from the inputs is differentiated
where the derivative runs it).
"""
from __future__ import annotations

import re

_ACQUIRE = "@__cxa_guard_acquire"
_GUARD_END = ("@__cxa_guard_release", "@__cxa_guard_abort")
_NAME = re.compile(r"@[-\w.$]+")


def constant_statics(module) -> set[str]:
    """The guarded statics of the module that are constants of the program (see above)."""
    regions: dict = {}          # static -> [(function, init blocks)], None: not a constant
    if _ACQUIRE not in module.text:
        return set()                      # (no guarded static: a substring test, not a scan)
    for f in module._bodies:
        lo, hi = module._bodies[f]
        if not any(_ACQUIRE in line for line in module._lines[lo:hi]):
            continue
        fn = module.function(f)
        for inst in fn.insts():
            if inst.op == "call" and inst.callee == _ACQUIRE and inst.ops:
                guard = inst.ops[0].value
                static = "@_Z" + guard[len("@_ZGV"):] if guard.startswith("@_ZGV") else None
                if static in module.globals:
                    region = _init_region(fn, inst, guard)
                    if region is None or not _closed(fn, region, inst):
                        regions[static] = None
                    elif regions.get(static, ()) is not None:
                        regions.setdefault(static, []).append((f, region))
    return {s for s, r in regions.items() if r and not _named_by_globals(module, s) and
            _only_read_outside(module, s, r)}


def _named_by_globals(module, static) -> bool:
    """Another global's initializer holds the static's address (`static T *pk = &k;`): code may
    write the static through it, which the function scan does not see."""
    return any(g != static and static in _NAME.findall(line.split("=", 1)[-1])
               for g, line in module.globals.items() if static in line)


def _init_region(fn, acquire, guard):
    """The blocks of the initialization: from the acquire's block on, up to the release (or
    the abort on an exception); None when a path leaves it otherwise (a return)."""
    start = acquire.block
    t = start.term
    cond = fn.defs.get(t.ops[0].value) if t.op == "br" and len(t.targets) == 2 else None
    if getattr(cond, "op", None) != "icmp" or cond.ops[0].value != acquire.name or \
            cond.ops[1].value != "0" or cond.pred not in ("eq", "ne"):
        return None
    # the branch taken when this thread initializes the static (acquire returned nonzero)
    init = t.targets[1] if cond.pred == "eq" else t.targets[0]
    region, todo = {start.label}, [fn.block(init)]
    while todo:
        b = todo.pop()
        if b.label in region:
            continue
        region.add(b.label)
        ends = any(i.op in ("call", "invoke") and i.callee in _GUARD_END and i.ops and
                   i.ops[0].value == guard for i in b.insts)
        if ends:
            continue
        if b.term.op in ("ret", "resume", "unreachable") and b is not start:
            return None
        for t in b.term.targets:
            if t != start.label:
                todo.append(fn.block(t))
    return region


def _region_insts(fn, region, acquire):
    """The instructions of the initialization: from the acquire to the release or abort."""
    for label in region:
        b = fn.block(label)
        insts = b.insts[b.insts.index(acquire):] if b is acquire.block else b.insts
        for inst in insts:
            yield inst
            if inst.op in ("call", "invoke") and inst.callee in _GUARD_END:
                break


def _closed(fn, region, acquire) -> bool:
    """No instruction of the region reads a parameter or a value from before the guard: the
    initializer depends on nothing the function was given (a call in it gets only constants
    and the region's own values)."""
    insts = list(_region_insts(fn, region, acquire))
    inside, ids = {i.name for i in insts if i.name}, {id(i) for i in insts}
    users = None
    for v in {v for i in insts for v in i.locals_used()} - inside - region:
        if getattr(fn.defs.get(v), "op", None) != "alloca":
            return False
        # a stack temporary of the initializer (unoptimized code: an initializer list) that
        # nothing outside writes; a parameter's spill slot is written at the entry
        users = users if users is not None else fn.users()
        if any(id(u) not in ids and not (u.op == "load" or u.op == "call" and
               (u.callee or "").startswith("@llvm.lifetime.")) for u in users.get(v, ())):
            return False
    return True


def _only_read_outside(module, static, regions) -> bool:
    """Outside its initialization, the static is only read, and so are the blocks reached
    through pointers read from it: loads, address arithmetic, comparisons, a stack slot the
    address is kept in (unoptimized code), and calls of functions that do the same with it
    (`operator[]`, `begin()` in code not inlined)."""
    for f in module._bodies:
        lo, hi = module._bodies[f]
        if not any(static in line for line in module._lines[lo:hi]):
            continue
        fn = module.function(f)
        mine = set().union(*(r for g, r in regions if g == f))
        uses = [(inst, k) for inst in fn.insts() if inst.block.label not in mine
                for k, o in enumerate(inst.ops) if static in _NAME.findall(o.value)]
        if not _read_only(module, fn, uses, mine, _DEPTH)[0]:
            return False
    return True


_DEPTH = 4          # calls followed into their callees


def _read_only(module, fn, uses, skip, depth) -> tuple[bool, bool]:
    """(nothing writes through these operands, or through what is derived from them; a value
    derived from them is returned). uses: (instruction, operand index) pairs."""
    derived, slots, todo, users = set(), set(), list(uses), None
    returned = False
    while todo:
        inst, k = todo.pop()
        if inst.block.label in skip:
            continue
        new = None
        if inst.op in ("load", "getelementptr", "phi", "select", "bitcast"):
            if inst.op == "load" and inst.ops[0].value in slots:
                pass                                # a reload of the kept address
            elif inst.op == "select" and k == 0 or inst.op == "load" and k != 0:
                return False, False
            new = inst.name if inst.ty == "ptr" else None
        elif inst.op in ("icmp", "ptrtoint"):
            continue
        elif inst.op == "ret":
            returned = True
            continue
        elif inst.op == "store":
            slot = inst.ops[1].value
            if k != 0 or getattr(fn.defs.get(slot), "op", None) != "alloca":
                return False, False
            if slot not in slots:
                slots.add(slot)
                users = users if users is not None else fn.users()
                for u in users.get(slot, ()):
                    if u.op == "load":
                        todo.append((u, 0))
                    elif not (u.op == "store" and u.ops[1].value == slot or u.op == "call" and
                              (u.callee or "").startswith("@llvm.lifetime.")):
                        return False, False
            continue
        elif inst.op in ("call", "invoke"):
            callee = inst.callee or ""
            if callee.startswith(("@llvm.lifetime.", "@llvm.dbg.")):
                continue
            target = module.function(callee) if depth and module.defines(callee) else None
            if target is None or k >= len(target.params):
                return False, False
            param = target.params[k].name
            ok, ret = _read_only(module, target, [(u, j) for u in target.users().get(param, ())
                                                  for j, o in enumerate(u.ops)
                                                  if o.value == param], set(), depth - 1)
            if not ok:
                return False, False
            new = inst.name if ret else None
        else:
            return False, False
        if new and new not in derived:
            derived.add(new)
            users = users if users is not None else fn.users()
            todo += [(u, j) for u in users.get(new, ()) for j, o in enumerate(u.ops)
                     if o.value == new]
    return True, returned
