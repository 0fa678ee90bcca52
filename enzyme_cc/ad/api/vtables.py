"""The targets of a virtual call: an indirect call through a function pointer read at a constant
offset from a table pointer that was itself read from memory (a C++ vptr, a Rust trait object's
vtable, a C `ops` record) can only reach the functions at that offset of the constant tables
the program points its objects at. dispatch.py's targets by signature alone also hold every
other function of the signature whose address is taken (Rust's standard library has many
`fn(&self) -> &str`), and they may not be differentiable the same way.

The narrowing is used only where it is sure: every function of the call's signature whose
address is taken appears in constant tables alone (never stored by code, never in a mutable
global), and every use of such a table's address is at an offset we can read (the table's
start, or a constant byte offset: C++'s address point past the offset-to-top and RTTI
fields). Otherwise the call keeps the signature's targets."""
from __future__ import annotations

import bisect
import re

from enzyme_cc.ir.lexer import parse_type, tokenize
from ..structure.type_layout import decompose, const_gep_offset, layout

# a use of a global's address at constant indices (C++'s vptr: the address point past the
# offset-to-top and RTTI slots): getelementptr [flags] (T, ptr @G, i64 K, ...)
_CONST_GEP = re.compile(r'getelementptr (?:inbounds |nuw |nusw )*(?:inrange\([-\d, ]+\) )?'
                        r'\((.+?), ptr (@"[^"]+"|@[-\w.$]+)((?:, i(?:32|64) -?\d+)+)\)')
_NAME = re.compile(r'@"[^"]+"|@[-\w.$]+')
# a global name used as a value (not followed by an argument list: not a call's callee)
_VALUE_USE = re.compile(r'(@"[^"]+"|@[-\w.$]+)(?![-\w.$"])(?!\s*\()')


class _Tables:
    """Per module: the function pointers of each constant table by byte offset, the offsets
    at which each table's address is used, and the functions used as values anywhere else."""

    def __init__(self, module):
        self.module = module
        self.slots: dict[str, dict[int, str]] = {}      # table -> {offset: function}
        self.points: dict[str, set] = {}                # table -> address points
        self.unsure_tables: set = set()                 # tables with an offset we cannot read
        self.elsewhere: set = set()                     # functions used as values elsewhere
        for g, line in module.globals.items():
            names = set(_NAME.findall(line.split("=", 1)[1] if "=" in line else ""))
            fns = {n for n in names if n in module._bodies}
            if not fns:
                continue
            slots = _table_slots(module, g, line) if module.is_constant_global(g) else None
            if slots is None:
                self.elsewhere |= fns
            else:
                self.slots[g] = slots
                self.elsewhere |= fns - set(slots.values())
        for line in module._lines:
            if "@" not in line or line.startswith(("define ", "declare ", "!", "attributes ",
                                                   "source_filename", "target ", ";")):
                continue
            if line.startswith("@"):        # a global: its initializer names tables
                self._address_uses(line.split("=", 1)[1] if "=" in line else "")
                continue
            for name in _VALUE_USE.findall(line):     # an instruction (not as its callee)
                if name in module._bodies:
                    self.elsewhere.add(name)
            if "memcpy" in line or "memmove" in line:
                # a table copied into memory (a local array of records initialized from a
                # constant): code may point into the copy anywhere, at any of its slots
                self.unsure_tables |= set(_VALUE_USE.findall(line)) & self.slots.keys()
            self._address_uses(line)

    def at_slot(self, off: int) -> set[str]:
        """The functions a read at byte offset `off` from a table's address can give: the
        function at that slot of every table, from each of its address points, and every
        function of a table whose uses we cannot read."""
        out = set()
        for g, slots in self.slots.items():
            if g in self.unsure_tables:
                out |= set(slots.values())
            for a in self.points.get(g, ()):
                if a + off in slots:
                    out.add(slots[a + off])
        return out

    def _address_uses(self, text: str) -> None:
        """Notes the offsets at which `text` uses tables' addresses: a constant byte offset,
        or the start; any other form (a typed constant GEP, a GEP instruction) makes the table
        unsure."""
        if "@" not in text:
            return
        for m in _CONST_GEP.finditer(text):
            if m.group(2) in self.slots:
                off = const_gep_offset(self.module, m.group(1), m.group(3))
                if off is None:
                    self.unsure_tables.add(m.group(2))
                else:
                    self.points.setdefault(m.group(2), set()).add(off)
        rest = _CONST_GEP.sub("", text)
        for name in set(_VALUE_USE.findall(rest)) & self.slots.keys():
            if "getelementptr" in rest:
                self.unsure_tables.add(name)
            self.points.setdefault(name, set()).add(0)


def _table_slots(module, g: str, line: str) -> dict | None:
    """{byte offset: function} of a constant global's initializer, or None where a pointer in
    it is not a plain value (a constant expression naming a global)."""
    toks = tokenize(line)
    k = next((j for j, t in enumerate(toks) if t in ("constant", "global")), None)
    if k is None:
        return None
    try:
        ty, j = parse_type(toks, k + 1)
    except (ValueError, IndexError):
        return None
    values = []
    while j < len(toks) and not (toks[j] == "," and toks[j + 1:j + 2] and
                                 toks[j + 1] in ("align", "comdat", "section", "partition")):
        t = toks[j]
        if t == "ptr" and toks[j - 1] not in ("x", "to") and j + 1 < len(toks) and \
                toks[j + 1] not in ("]", ",", "}", ">", ")"):
            v = toks[j + 1]
            if v.startswith("@"):
                values.append(v)
            elif v in ("null", "undef", "poison"):
                values.append(None)
            else:                               # a constant expression: no global in it
                depth, m = 0, j + 2
                while m < len(toks):
                    depth += toks[m] == "("
                    depth -= toks[m] == ")"
                    if toks[m].startswith("@"):
                        return None
                    if depth == 0 and toks[m] == ")":
                        break
                    m += 1
                values.append(None)
        j += 1
    offsets = sorted(o for o, kind in layout(ty, module.named_types).items() if kind == "ptr")
    if len(offsets) != len(values):
        return None
    return {o: v for o, v in zip(offsets, values) if v in module._bodies}


def tables(module) -> _Tables:
    """The module's constant tables and their address points (kept on the module)."""
    t = module.__dict__.get("_vtables")
    if t is None:
        t = module._vtables = _Tables(module)
    return t


def _function_at(module, line: int):
    """The function whose body holds module line `line`."""
    spans = module.__dict__.get("_body_starts")
    if spans is None:
        spans = module._body_starts = sorted((s, e, n) for n, (s, e) in module._bodies.items())
    k = bisect.bisect_right(spans, (line, float("inf"), "")) - 1
    if k >= 0 and spans[k][0] <= line < spans[k][1]:
        return module.function(spans[k][2])
    return None


def _same_call(fn, inst) -> bool:
    """fn's instruction at inst's line is that call (inst may be a prepared copy's)."""
    lines = fn.__dict__.get("_calls_by_line")
    if lines is None:
        lines = fn._calls_by_line = {i.line: i for i in fn.insts()
                                     if i.op in ("call", "invoke")}
    mine = lines.get(inst.line)
    return mine is not None and mine.callee == inst.callee and len(mine.ops) == len(inst.ops)


def narrowed(module, inst, targets: list[str]) -> list[str]:
    """The targets of indirect call `inst` among `targets` (its signature's address-taken
    functions) that a table slot can hold, where that is sure (module docstring); else
    `targets` unchanged."""
    if len(targets) < 2 or not (inst.callee or "").startswith("%"):
        return targets
    fn = _function_at(module, inst.line)
    if fn is None or not _same_call(fn, inst):
        return targets              # (a call of code made after parsing: no line of its own)
    d = fn.defs.get(inst.callee)
    if getattr(d, "op", None) != "load":
        return targets
    table, off = decompose(module, fn, d.ops[0].value)
    if off is None or getattr(fn.defs.get(table), "op", None) != "load":
        return targets
    tabs = tables(module)
    if any(t in tabs.elsewhere for t in targets) or any(
            set(tabs.slots[g].values()) & set(targets) for g in tabs.unsure_tables):
        return targets
    at = tabs.at_slot(off)
    keep = [t for t in targets if t in at]
    return keep if keep else targets
