"""Global shadows in nested derivatives: a derivative (round k of generate.differentiate) of code
that itself calls a derivative with the global-shadow API, as in Hessians through globals
(`__enzyme_fwddiff(df, enzyme_context, outer, ...)` where df calls
`__enzyme_autodiff(f, enzyme_context, inner, x)`).

The first round builds the one table of persistent globals (global_shadows.Table, its globals in
`@ad.gs.globals`) and lowers every API call; contexts are blocks per (global, lane) and do not
depend on the round. What does is the static storage a round's derivatives read and write:
round k's shadow of g is a global of its own (shadow_storage.shadow_global), since the inner round's
`@ad.shadow.g` is primal data to it. So each later round adds its own default set, swap, enter,
leave and prepare helpers (`@ad.gs.L<k>.*`, LevelTable) over the same globals; its default set
is never queried by the program, so its derivatives called without a context start from zero.

To the outer derivative the helper calls of an inner round are bookkeeping (generate.Generator
registers them inactive), with one effect on derivatives (outer_call): a swap exchanges the
inner statics with blocks whose values carry no outer derivative, so the outer shadows of those
statics are zeroed there, in both modes. That holds when the differentiated code only seeds a
context with constants and never reads one back, and each forward-mode inner derivative there
reads seeds nothing else wrote: check_outer refuses the rest.
"""
from __future__ import annotations

import re

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import type_size
from ..structure.diagnostics import located
from .global_shadow_table import BASE_GLOBALS, Table
from ..structure.type_layout import global_type
from .global_addresses import resolve
from .shared_globals import accesses

_SWAP = re.compile(r'@"?(ad\.gs(?:\.L\d+)?)\.(enter|leave|prepare)\.(\d+)"?$')
_SHADOW_HINT = "seed or zero the inner context's shadows with constants, and read them outside " \
    "the differentiated code"


class LevelTable(Table):
    """Round k >= 2: the base table's globals, with this round's static storage."""

    def __init__(self, gen, globals_, ws):
        super().__init__(gen, globals_, ws)
        self.prefix = f"ad.gs.L{gen.level}"

    def definitions(self) -> list[str]:
        out = []
        for w in self.widths:
            if not self.gen.module.defines(f"@ad.gs.init.{w}"):
                raise UserError(f"a derivative of width {w} in a later round of nested derivatives "
                                "with global shadows has no context of that width; hint: use the "
                                "widths of the inner derivatives")
            out += self.round_helpers(w)
        return out


def level_setup(gen, requests):
    line = gen.module.globals[BASE_GLOBALS]
    init = line.split(" constant ", 1)[1]
    globals_ = re.findall(r'ptr (@[-\w.$]+|@"[^"]+")', init)
    gen.persistent = set(globals_)
    return LevelTable(gen, globals_, {1} | {getattr(r, "width", 1) for r in requests})


def _statics(module, prefix, w) -> list[str]:
    """The static shadows (lane blocks) in the default set `@<prefix>.default.<w>`."""
    line = module.globals.get(f"@{prefix}.default.{w}", "")
    return [g for g in re.findall(r'ptr (@[-\w.$]+|@"[^"]+")', line)]


def outer_call(ctx, inst, lane=None, width=1):
    """An inner round's enter/leave/prepare swaps its statics: zero the outer shadows of them
    (forward: tangents after the call; reverse: adjoints where the reverse sweep passes it)."""
    m = _SWAP.match(inst.callee or "")
    if not m:
        return
    gen = ctx.gen()
    for s in _statics(gen.module, m.group(1), int(m.group(3))):
        size = type_size(global_type(gen.module, s), gen.module.named_types)
        gen.zero_memory(ctx.emit, gen.shadow_global(s, lane if width > 1 else None, width),
                        str(size))


def check_outer(gen, requests, later, calls, table):
    """Refuse what outer_call's zeroing would get wrong in the code later rounds differentiate."""
    outer = accesses(gen, [r.fn for r in later])[0]
    for fn, inst, name in calls:
        if fn.name in outer and name == "__enzyme_shadow":
            _seeds_only(gen, fn, inst, inst.name)
    uses: dict = {}
    for r in requests:
        if r.caller.name in outer and getattr(r, "context", None) is not None:
            key = (r.caller.name, resolve(r.caller, r.context.value))
            uses[key] = uses.get(key, 0) + 1
    for r in requests:
        if r.caller.name not in outer:
            continue
        where = located(gen.module, r.caller, r.inst)
        if table.slots:
            raise UserError(f"{where}: a derivative inside a function that is differentiated, in a "
                            "program whose globals with shadows hold pointers "
                            f"('{table.globals[table.slots[0][0]][1:]}'): not supported yet; hint: "
                            "keep pointers out of the globals, or pass the data as arguments")
        opts = getattr(r, "opts", {}) or {}
        if r.mode == "reverse" and not opts.get("primal") and \
                not getattr(r, "reverse_vector", False):
            continue            # its result never depends on the shadows it accumulates into
        if r.mode != "forward":
            raise UserError(f"{where}: only __enzyme_autodiff and __enzyme_fwddiff are supported "
                            "inside a function that is differentiated in a program using "
                            "__enzyme_context / __enzyme_shadow / enzyme_context; hint: use the "
                            "combined forms")
        ctx = getattr(r, "context", None)
        if ctx is None:
            if set(accesses(gen, [r.fn])[1]) & set(table.globals):
                raise UserError(f"{where}: forward mode inside a function that is differentiated "
                                "reads tangents of globals from the default shadows, which other "
                                "derivatives there may have written; enzyme-cc does not support "
                                "that; hint: pass a context made just before the call "
                                "(enzyme_context, __enzyme_context)")
            continue
        cv = resolve(r.caller, ctx.value)         # (unoptimized code: through its slot)
        d = r.caller.defs.get(cv)
        fresh = getattr(d, "op", None) == "call" and \
            (d.callee or "").strip('@"') == "__enzyme_context" and d.block is r.inst.block and \
            uses[(r.caller.name, cv)] == 1
        if not fresh:
            raise UserError(f"{where}: forward mode with enzyme_context inside a function that is "
                            "differentiated needs a context made by __enzyme_context in the same "
                            "block and used by this derivative only (its seeds must carry no "
                            "derivative of the outer one); hint: make a new context for the call")


def _seeds_only(gen, fn, inst, v):
    """A shadow pointer in differentiated code may only be stored to with constants."""
    for u in fn.insts():
        if not any(o.value == v for o in u.ops):
            continue
        if u.op in ("getelementptr", "bitcast", "addrspacecast") and u.ops[0].value == v:
            _seeds_only(gen, fn, u, u.name)
        elif u.op == "store" and u.ops[1].value == v and u.ops[0].value != v and \
                not u.ops[0].is_local:
            continue
        elif u.op == "call" and (u.callee or "").startswith(("@llvm.memset", "@memset")) and \
                u.ops[0].value == v and not u.ops[1].is_local:
            continue
        else:
            raise UserError(f"{located(gen.module, fn, u)}: a shadow from __enzyme_shadow inside a "
                            "function that is differentiated is used other than to store a "
                            "constant in it (its value would carry no derivative of the outer "
                            f"derivative); hint: {_SHADOW_HINT}")
