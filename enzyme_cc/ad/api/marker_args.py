"""The tags and constants among a marker call's arguments: which activity marker (`enzyme_dup`,
`enzyme_const`, ...) an argument passes, and enzyme_width's constant N."""
from __future__ import annotations

from enzyme_cc.errors import UserError

MARKERS = ("enzyme_dup", "enzyme_dupnoneed", "enzyme_const", "enzyme_out", "enzyme_active",
           "enzyme_width", "enzyme_dupv", "enzyme_dupnoneedv", "enzyme_allocated", "enzyme_tape",
           "enzyme_nofree", "enzyme_primal_return", "enzyme_const_return", "enzyme_noret",
           "enzyme_active_return", "enzyme_dup_return", "enzyme_interleave", "enzyme_context")

def _marker_of(caller, value: str, names=MARKERS) -> str | None:
    """The marker global (`enzyme_dup`, ... or one of `names`) that an argument passes, directly
    or loaded from it."""
    if value.startswith("@"):
        name = value[1:].strip('"')
        return name if name in names else None
    d = caller.defs.get(value)
    if d is not None and getattr(d, "op", None) == "load" and d.ops[0].value.startswith("@"):
        name = d.ops[0].value[1:].strip('"')
        return name if name in names else None
    return None


def constant_width(ops, where) -> int:
    """N of `marker(f, enzyme_width, N, ...)`: a constant of at least 1."""
    try:
        width = int(ops[2].value)
    except ValueError:
        raise UserError(f"{where}: enzyme_width needs a constant width, got '{ops[2].value}'") from None
    if width < 1:
        raise UserError(f"{where}: enzyme_width must be at least 1, got {width}")
    return width
