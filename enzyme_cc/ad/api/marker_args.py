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


def refuse_misspelt_markers(caller, inst, where, known=MARKERS + ("enzyme_nocache",)):
    """An argument read from a global named like an activity marker that is none of them
    (`enzyme_dupp`): the call would pass its value as an argument (or not link), so it is
    named, with the marker it may have meant."""
    import difflib
    for o in inst.ops:
        d = caller.defs.get(o.value)
        g = d.ops[0].value if getattr(d, "op", None) == "load" else o.value
        name = g[1:].strip('"') if g.startswith("@") else ""
        if name.startswith("enzyme_") and name not in known:
            near = difflib.get_close_matches(name, known, n=1)
            raise UserError(f"{where}: '{name}' is not an activity marker" +
                            (f"; hint: did you mean '{near[0]}'?" if near else
                             f"; hint: the markers are {', '.join(MARKERS[:5])}, ..."))


def constant_width(ops, where) -> int:
    """N of `marker(f, enzyme_width, N, ...)`: a constant of at least 1."""
    try:
        width = int(ops[2].value)
    except ValueError:
        raise UserError(f"{where}: enzyme_width needs a constant width, got '{ops[2].value}'") from None
    if width < 1:
        raise UserError(f"{where}: enzyme_width must be at least 1, got {width}")
    return width
