"""Which globals an `__enzyme_shadow` call names (ad/api/global_shadows.py): its address operand
followed through casts, GEPs, a local slot stored once (unoptimized code), phis and selects, and
function parameters (a C++ reference, e.g. enzyme::shadow's when not inlined) to every direct
caller. The run-time lookup searches the table by address, so several candidates are fine.
"""
from __future__ import annotations

import re

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import GLOBAL_REF
from ..structure.diagnostics import is_flang, located
from ..structure.type_layout import underlying



def resolve(fn, v: str, depth: int = 0) -> str:
    """The value behind v through casts, GEPs and (unoptimized code) a local slot stored once."""
    v = underlying(fn, v)
    d = fn.defs.get(v)
    if depth < 8 and d is not None and getattr(d, "op", None) == "load":
        slot = d.ops[0].value
        stores = [i for i in fn.insts() if i.op == "store" and i.ops[1].value == slot]
        if len(stores) == 1 and fn.defs.get(slot) is not None and fn.defs[slot].op == "alloca":
            return resolve(fn, stores[0].ops[0].value, depth + 1)
    return v


def _callers(gen, name: str):
    """[(caller, call)] of the direct calls of `name`, or None when it may be called otherwise
    (its address is a value: a function pointer, a table in a global)."""
    cache = gen.__dict__.setdefault("_gs_callers", {})
    if name not in cache:
        pat = re.compile(re.escape(name) + r"(?![-\w.$])")
        out = None if any(pat.search(line) for line in gen.module.globals.values()) else []
        for f, (start, end) in gen.module._bodies.items() if out is not None else ():
            if not any(pat.search(line) for line in gen.module._lines[start + 1:end]):
                continue
            for inst in gen.module.function(f).insts():
                if any(pat.search(o.value) for o in inst.ops):
                    out = None
                    break
                if inst.op in ("call", "invoke") and inst.callee == name:
                    out.append((gen.module.function(f), inst))
            if out is None:
                break
        cache[name] = out
    return cache[name]


def address_globals(gen, fn, v: str, seen=None) -> set[str] | None:
    """The globals an address operand may point into: `@g` or a constant expression of it; a
    phi or select of such addresses; a parameter (a C++ reference such as enzyme::shadow's, when
    not inlined): what every direct caller passes. None when some source is not a global."""
    seen = set() if seen is None else seen
    if (fn.name, v) in seen:
        return set()
    seen.add((fn.name, v))
    r = resolve(fn, v)
    if not r.startswith("%"):
        m = GLOBAL_REF.search(r)
        return {m.group(0)} if m else None
    d = fn.defs.get(r)
    if d is not None and getattr(d, "op", None) in ("phi", "select"):
        srcs = [x for x, _ in d.incoming] if d.op == "phi" else [d.ops[1].value, d.ops[2].value]
        out = set()
        for x in srcs:
            got = address_globals(gen, fn, x, seen)
            if got is None:
                return None
            out |= got
        return out
    k = next((i for i, p in enumerate(fn.params) if p.name == r), None)
    callers = _callers(gen, fn.name) if k is not None else None
    if not callers or len(seen) > 64:
        return None
    out = set()
    for caller, call in callers:
        if k >= len(call.ops):
            return None
        got = address_globals(gen, caller, call.ops[k].value, seen)
        if got is None:
            return None
        out |= got
    return out


def context_width(fn, v: str) -> int | None:
    """The constant width of the `__enzyme_context(N)` call a context value comes from."""
    d = fn.defs.get(resolve(fn, v))
    if d is not None and getattr(d, "op", None) == "call" and \
            (d.callee or "").strip('@"') in ("__enzyme_context", "ad.gs.context") and d.ops and \
            d.ops[0].value.isdigit():
        return int(d.ops[0].value)
    return None


def queried_globals(gen, calls) -> set[str]:
    out = set()
    for fn, inst, name in calls:
        if name != "__enzyme_shadow":
            continue
        addr = inst.ops[1] if inst.ops and inst.ops[0].ty == "ptr" and len(inst.ops) > 1 and \
            inst.ops[1].ty == "ptr" else inst.ops[0] if inst.ops else None
        gs = address_globals(gen, fn, addr.value) if addr is not None else None
        if not gs or any(g not in gen.module.globals for g in gs):
            raise UserError(f"{located(gen.module, fn, inst)}: __enzyme_shadow needs the address of "
                            "a global variable (or of a member or element of one) known at link "
                            "time (directly, or through parameters whose every caller passes "
                            "one); hint: " + (
                                "pass c_loc of a module variable of fixed size (an allocatable "
                                "array's data has no address known at link time)"
                                if is_flang(fn.name) else
                                "pass &global directly"))
        for g in sorted(gs):
            _check_queried(gen, fn, inst, g)
        out |= gs
    return out


def _check_queried(gen, fn, inst, g):
    if gen.module.is_constant_global(g):
        raise UserError(f"{located(gen.module, fn, inst)}: '{g[1:]}' is constant: it has no "
                        "shadow; hint: declare it without const")
    if g in gen.reg.inactive_globals:
        raise UserError(f"{located(gen.module, fn, inst)}: '{g[1:]}' is marked enzyme_inactive: "
                        "it holds no derivative; hint: remove the attribute to get its shadow")
    if g in gen.reg.shadows:
        raise UserError(f"{located(gen.module, fn, inst)}: '{g[1:]}' has a shadow of its own "
                        "(enzyme_shadow); hint: use that global instead of __enzyme_shadow")
