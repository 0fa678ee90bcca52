"""Enzyme's global-shadow API: `__enzyme_shadow`, `__enzyme_context`, `__enzyme_zero_shadows`
and the `enzyme_context, ctx` marker option.

Derivative code always reads and writes the static shadow globals `@ad.shadow.<g>` (one per
lane and width in vector mode): they are the default shadow set of each width. The globals named
by a `__enzyme_shadow` call, and every mutable data global a derivative called with
`enzyme_context` reads or writes, are "persistent": active everywhere in the call trees, never
zeroed by a derivative (the program zeroes or seeds them).

A shadow set at run time is an array of pointer-sized words (`_Layout`): width, initialized
flag, next set (all contexts stay reachable from `@ad.gs.list`), one block pointer per (global,
lane), then per (pointer field, lane) the primal heap block it last pointed to and the zeroed
shadow block the set owns for it. A default set's blocks are the static shadows; a context's are
its own allocations, swapped into the static storage around a derivative called with it.
Pointer fields are re-derived from the primal pointers whenever a set is used: into another
table global -> into that global's shadow in the same set; to heap memory -> the set's zeroed
block of `malloc_usable_size` bytes; otherwise null (a derivative through it faults rather than
landing in primal memory).

All the helpers are unrolled over the table at link time, one copy per width the program uses.
"""
from __future__ import annotations

import re
from types import SimpleNamespace

from enzyme_cc.errors import UserError
from ..structure.diagnostics import located
from .global_addresses import queried_globals
from ..structure.type_layout import underlying
from .global_shadow_table import BASE_GLOBALS, Table
from . import global_shadows_nested as nested
from .markers import drop_unwind_edge
from .shared_globals import accesses, address_stores

API = ("__enzyme_context", "__enzyme_shadow", "__enzyme_zero_shadows")
API_CALL = re.compile(r"@\"?(__enzyme_context|__enzyme_shadow|__enzyme_zero_shadows)\"?\(")


def uses_api(text: str) -> bool:
    return bool(API_CALL.search(text)) or "@enzyme_context" in text


def api_calls(module):
    """[(caller, inst, name)] for every call of the API in the module."""
    out = []
    for f, (start, end) in module._bodies.items():
        if not API_CALL.search("\n".join(module._lines[start:end])):
            continue
        fn = module.function(f)
        for inst in fn.insts():
            if inst.op in ("call", "invoke") and (inst.callee or "").strip('@"') in API:
                out.append((fn, inst, inst.callee.strip('@"')))
    return out


def widths(gen, calls, requests) -> set[int]:
    ws = {1} | {getattr(r, "width", 1) for r in requests}
    for fn, inst, name in calls:
        if name == "__enzyme_context" and inst.ops and inst.ops[0].value.isdigit():
            ws.add(int(inst.ops[0].value))
        if name == "__enzyme_shadow" and len(inst.ops) == 3 and inst.ops[1].ty != "ptr" and \
                inst.ops[1].value.isdigit():
            ws.add(int(inst.ops[1].value))
    return {w for w in ws if w >= 1}


def setup(gen, requests, calls, later=()):
    """The table of persistent globals (gen.persistent) when the program uses the API, else None.
    `later`: the requests of later rounds (derivatives of code calling these markers)."""
    if not calls and BASE_GLOBALS in gen.module.globals:
        return nested.level_setup(gen, requests)     # a later round: see global_shadows_nested
    ctx_reqs = [r for r in [*requests, *later] if getattr(r, "context", None) is not None]
    if not calls and not ctx_reqs:
        return None
    reach = accesses(gen, [r.fn for r in requests])[0]
    for fn, inst, name in calls:
        if fn.name in reach:
            raise UserError(f"{located(gen.module, fn, inst)}: {name} inside a function that is "
                            "differentiated is not supported yet; hint: make the context and query "
                            "shadows outside the differentiated code")
    for r in ctx_reqs:
        if r.caller.name in reach:
            raise UserError(f"{located(gen.module, r.caller, r.inst)}: enzyme_context inside a "
                            "function that is differentiated is not supported yet")
    persistent = queried_globals(gen, calls)
    if ctx_reqs:
        access = accesses(gen, [r.fn for r in ctx_reqs])[1]
        persistent |= set(access) - set(gen.reg.shadows)
    targets = address_stores(gen)
    todo = list(persistent)
    while todo:       # the globals a persistent pointer global may point into
        for t in targets.get(todo.pop(), ()):
            if t not in persistent and t not in gen.reg.shadows:
                persistent.add(t)
                todo.append(t)
    _no_pointer_stores(gen, reach, persistent)
    gen.persistent = persistent
    table = Table(gen, persistent, widths(gen, calls, [*requests, *later]))
    if later:
        nested.check_outer(gen, requests, later, calls, table)
    return table


def _no_pointer_stores(gen, reach, persistent):
    """A shadow set re-derives pointer fields from the primal pointers between derivative calls;
    a pointer the derivative itself stores into such a global (a block it allocates, an address
    it computes) would lose its shadow there: refuse it."""
    for f in sorted(reach):
        fn = gen.module.function(f)
        for inst in fn.insts():
            if inst.op == "store" and inst.ops[0].ty == "ptr" and inst.ops[0].is_local:
                g = underlying(fn, inst.ops[1].value)
                if g in persistent:
                    raise UserError(f"{located(gen.module, fn, inst)}: the differentiated code stores "
                                    f"a pointer into '{g[1:]}', whose shadow the program owns "
                                    "(__enzyme_shadow / enzyme_context); enzyme-cc does not support "
                                    "that yet; hint: set the pointer before calling the derivative")


def lower_calls(gen, lines, calls):
    """Rewrite each API call into a call of its run-time helper."""
    for fn, inst, name in calls:
        ops = inst.ops
        pre, res = [], f"{inst.name} = " if inst.name else ""
        if name == "__enzyme_context":
            n = _as_i32(pre, inst, ops[0]) if ops else "1"
            call = f"{res}call ptr @ad.gs.context(i32 {n})"
        elif name == "__enzyme_zero_shadows":
            call = f"call void @ad.gs.zero_ctx(ptr {ops[0].value})"
            res = ""
        elif len(ops) == 3 and ops[0].ty == "ptr" and ops[1].ty == "ptr":
            call = f"{res}call ptr @ad.gs.shadow_ctx(ptr {ops[0].value}, ptr {ops[1].value}, " \
                   f"i32 {_as_i32(pre, inst, ops[2])})"
        elif len(ops) == 3 and ops[0].ty == "ptr":
            call = f"{res}call ptr @ad.gs.shadow_default(ptr {ops[0].value}, " \
                   f"i32 {_as_i32(pre, inst, ops[1])}, i32 {_as_i32(pre, inst, ops[2], 'l')})"
        else:
            raise UserError(f"{located(gen.module, fn, inst)}: __enzyme_shadow takes (context, "
                            "&global, lane) or (&global, width, lane)")
        if name == "__enzyme_zero_shadows" and inst.name:
            pre.append(f"{inst.name} = freeze {inst.ty} poison")
        new = pre + [call]
        if inst.op == "invoke":
            new.append(f"br label {inst.targets[0]}")
            drop_unwind_edge(lines, SimpleNamespace(caller=fn, inst=inst))
        lines[inst.line] = "\n".join(new)
        for k in range(inst.line + 1, inst.line_end + 1):
            lines[k] = ""


def _as_i32(pre, inst, op, tag="w"):
    if op.ty == "i32":
        return op.value
    if not op.ty.startswith("i"):
        raise UserError(f"__enzyme_shadow / __enzyme_context: expected an integer, got {op.ty}")
    t = f"%ad.gs.{tag}{inst.line}.{len(pre)}"
    pre.append(f"{t} = {'trunc' if int(op.ty[1:]) > 32 else 'sext'} {op.ty} {op.value} to i32")
    return t
