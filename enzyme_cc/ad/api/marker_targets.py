"""Which function a marker call's function argument is: a function named directly, or the functions
a pointer may hold, followed through locals, phis and selects, stored slots and the call sites of
a parameter (`_known_functions`); a marker on a pointer none of whose values is known is refused
in a shared library (`refuse_unknown_function`)."""
from __future__ import annotations

import re

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import name_ref
from ..structure.diagnostics import located
from ..structure.type_layout import decompose, global_type, layout, underlying
def _integer_memory(module, caller, value) -> bool:
    """value points into a local or global whose declared type holds integers only."""
    base = underlying(caller, value)
    d = caller.defs.get(base)
    ty = d.src_ty if getattr(d, "op", None) == "alloca" else \
        global_type(module, base) if base.startswith("@") else None
    kinds = set(layout(ty, module.named_types).values()) if ty else set()
    return kinds == {"int"}


def refuse_unknown_function(module, caller, inst):
    """A marker call whose function the program does not determine."""
    d = caller.defs.get(underlying(caller, inst.ops[0].value))
    if getattr(d, "op", None) == "call" and (d.callee or "").startswith("@llvm.adjust.trampoline"):
        raise UserError(f"{located(module, caller, inst)}: the function given to "
                        f"{inst.callee[1:]} is an internal procedure that uses its host's "
                        "variables, which flang passes through a trampoline built at run time, "
                        "not a function known at link time; hint: move the procedure into a "
                        "module (or make it use no host variable) and pass the host's data as "
                        "arguments")
    raise UserError(f"{located(module, caller, inst)}: the first argument of {inst.callee[1:]} "
                    f"must be a function known at compile time, got '{inst.ops[0].value}'; hint: "
                    "pass the function itself, e.g. (void *)f, not a pointer chosen at run time")


_ADDRESS = re.compile(r"^ptrtoint \( ?ptr (@[-\w.$]+|@\"[^\"]+\") to i64 ?\)$")


def _known_functions(module, caller, value, seen=None) -> list[str] | None:
    """The defined functions a function pointer can be (None: not only those): a function, a
    select or phi of them, or a parameter of a function whose callers all pass them (a checking
    helper given each function in turn, `check(f1); check(f2); ...`, where LLVM neither inlined
    nor specialized it; [] when nothing calls it). The derivative dispatches on the pointer at
    run time, and a pointer none of them matches (a caller outside the program) stops with a
    message."""
    m = _ADDRESS.match(value)
    if m:                                   # a function's address as an integer (c_funloc)
        value = m.group(1)
    if value.startswith("@"):
        return [value] if module.function(value) is not None else None
    seen = seen if seen is not None else set()
    key = (caller.name, value)
    if key in seen:
        return []
    seen.add(key)
    d = caller.defs.get(value)
    if d is not None and not hasattr(d, "op"):          # a parameter
        k = next(j for j, p in enumerate(caller.params) if p.name == value)
        sites = _call_sites(module, caller.name)
        if sites is None or len(seen) > 64:
            return None
        incoming = [(f, i.ops[k].value) for f, i in sites]
    elif getattr(d, "op", None) in ("inttoptr", "ptrtoint"):
        incoming = [(caller, d.ops[0].value)]               # (Fortran's c_funptr: an integer)
    elif getattr(d, "op", None) in ("select", "phi"):
        incoming = [(caller, v) for v in ([v for v, _ in d.incoming] if d.op == "phi"
                                         else [o.value for o in d.ops[1:3]])]
    elif getattr(d, "op", None) == "load" and \
            (stored := _slot_values(caller, d.ops[0].value)) is not None:
        incoming = [(caller, v) for v in stored]            # (unoptimized code's spill slot)
    elif getattr(d, "op", None) == "load" and \
            (table := _function_table(module, underlying(caller, d.ops[0].value))) is not None:
        return table                   # a switch over functions, made a lookup table by LLVM
    elif getattr(d, "op", None) == "load" and \
            (held := _held_functions(module, caller, d.ops[0].value, seen)) is not None:
        return held
    else:
        return None
    out = []
    for fn, v in incoming:
        got = _known_functions(module, fn, v, seen)
        if got is None:
            return None
        out += [f for f in got if f not in out]
    return out


def _held_functions(module, caller, ptr, seen) -> list | None:
    """The functions a pointer parameter's memory holds at its start, from what each caller
    stores into the slot it passes (Fortran's `type(c_funptr), intent(in) :: fp`, passed by
    reference: `call show(c_funloc(f))`); None where a caller passes anything else. (A
    function stored there by other code is caught at run time, as any unknown pointer.)"""
    base, off = decompose(module, caller, ptr)
    d = caller.defs.get(base)
    if off != 0 or d is None or hasattr(d, "op"):
        return None                                     # not the start of a parameter's memory
    k = next(j for j, p in enumerate(caller.params) if p.name == base)
    sites = _call_sites(module, caller.name)
    if sites is None or len(seen) > 64:
        return None
    out = []
    for fn, inst in sites:
        slot = inst.ops[k].value
        slot_base, slot_off = decompose(module, fn, slot)
        if slot_off != 0:
            return None
        if not hasattr(fn.defs.get(slot_base), "op"):   # the caller's own parameter, passed on
            got = _held_functions(module, fn, slot, seen)
        elif getattr(fn.defs.get(slot_base), "op", None) == "alloca" or slot_base.startswith("@"):
            got = []                # (a main program's variable is a global: its stores here)
            for v in [i.ops[0].value for i in fn.insts()
                      if i.op == "store" and i.ops[1].value == slot_base]:
                more = _known_functions(module, fn, v, seen)
                if more is None:
                    return None
                got += more
        else:
            return None
        if got is None:
            return None
        out += [f for f in got if f not in out]
    return out


def _function_table(module, g: str) -> list | None:
    """The functions of a constant global array holding nothing but defined functions (LLVM's
    lookup table for a `switch` or a `match` whose arms pick a function), None otherwise."""
    if not g.startswith("@") or not module.is_constant_global(g):
        return None
    init = module.globals[g].split("constant", 1)[1]
    entries = re.findall(r"\bptr\s+([^,\]]+)", init.split("[", 1)[-1])
    fns = [e.strip() for e in entries]
    if not fns or any(not f.startswith("@") or module.function(f) is None for f in fns):
        return None
    return list(dict.fromkeys(fns))


def _slot_values(caller, slot) -> list | None:
    """The values stored into a local slot that is only stored into and loaded from (an
    unoptimized parameter's spill slot); None when it is used otherwise."""
    if getattr(caller.defs.get(slot), "op", None) != "alloca":
        return None
    stored = []
    for inst in caller.users().get(slot, ()):
        if inst.op == "store" and inst.ops[1].value == slot and inst.ops[0].value != slot:
            stored.append(inst.ops[0].value)
        elif inst.op != "load" and not (inst.op == "call" and
                                        (inst.callee or "").startswith("@llvm.lifetime")):
            return None
    return stored


def _call_sites(module, name) -> list | None:
    """(function, call) for every use of function `name`, when each is a direct call passing
    every parameter; None when its address is used otherwise (it may be called from anywhere)."""
    ref, nparams = name_ref(name), len(module.function(name).params)
    sites = []
    for other, (start, end) in module._bodies.items():
        if other == name or not any(ref.search(l) for l in module._lines[start + 1:end]):
            continue
        fn = module.function(other)
        for inst in fn.insts():
            if not any(ref.search(t) for t in inst.toks):
                continue
            if inst.op not in ("call", "invoke") or inst.callee != name or \
                    any(ref.search(o.value) for o in inst.ops) or len(inst.ops) != nparams:
                return None
            sites.append((fn, inst))
    used_elsewhere = any(ref.search(l) for l in module.globals.values())
    return None if used_elsewhere else sites
