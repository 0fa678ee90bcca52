"""Unoptimized code's local slots: the allocas that only stores fill and only loads read (its
local variables and spilled arguments), and the parameter a load from such a slot reloads."""
from __future__ import annotations


def reloaded_param(fn, v: str) -> str | None:
    """The parameter v is, reloaded from the local slot unoptimized code spills it to (a slot
    that one store fills with that parameter), or None."""
    d = fn.defs.get(v)
    if getattr(d, "op", None) != "load":
        return None
    stored = param_spill_slots(fn).get(d.ops[0].value, ())
    return stored[0] if len(stored) == 1 else None


def param_spill_slots(fn) -> dict:
    """{local slot: the parameters stored into it} for the slots that only stores of parameters
    fill and only loads read (besides lifetime and debug markers): where unoptimized code spills
    its arguments. Computed once per function."""
    slots = fn.__dict__.get("_param_slots")
    if slots is None:
        params = {p.name for p in fn.params}
        slots = fn._param_slots = {s: v for s, v in local_slot_stores(fn).items()
                                   if set(v) <= params}
    return slots


def local_slot_stores(fn) -> dict:
    """{local slot: the values stored into it, in order} for the allocas that only stores fill
    and only loads read (besides lifetime and debug markers): unoptimized code's local
    variables and spilled arguments. Computed once per function."""
    slots = fn.__dict__.get("_slot_stores")
    if slots is not None:
        return slots
    allocas = {i.name for i in fn.insts() if i.op == "alloca"}
    stored: dict = {}
    for i in fn.insts():
        for k, o in enumerate(i.ops):
            if o.value not in allocas:
                continue
            if i.op == "store" and k == 1 and i.ops[0].value != o.value:
                stored.setdefault(o.value, []).append(i.ops[0].value)
            elif not (i.op == "load" or i.op == "call" and
                      (i.callee or "").startswith(("@llvm.lifetime", "@llvm.dbg"))):
                allocas.discard(o.value)        # written otherwise, or its address taken
    fn._slot_stores = {s: v for s, v in stored.items() if s in allocas}
    return fn._slot_stores
