"""Source locations on the derivatives (a program compiled with -g): each instruction a derivative
computes for a primal instruction carries that instruction's line, so that a profiler (perf,
callgrind), a debugger's backtrace or a sanitizer's report inside `rev.f` names the source line it
comes from, as in the primal.

The emitters tag what they write for one primal instruction with its own location (`tag`, the
primal's `!dbg !N`); when a derivative function is assembled, its body's locations are moved into
a subprogram of its own (a copy of the primal's, named after the derivative: LLVM attaches one
subprogram to one function), with the lexical blocks between them copied and the inlined-at chains
of code inlined before AD rebuilt on top of it (`FunctionScope.resolve`). A location that cannot be
moved is dropped, never kept pointing into another function's subprogram; instructions without
one get line 0 of the derivative (LLVM requires a location on a call of a function with debug
info, and inlined, an instruction without one would take the line before it).
"""
from __future__ import annotations

import re

_REF = re.compile(r"!\d+")
_FIELD = {k: re.compile(rf"\b{k}: (!\d+)") for k in ("scope", "inlinedAt", "file", "unit")}
_DBG_SUFFIX = re.compile(r", !dbg (!\d+)$")
_HEADER_DBG = re.compile(r" !dbg !\d+ \{$")
_INST = re.compile(r'^\s*(?:%[-\w.$"]+ = )?[a-z]')
# calls of the tape's runtime stay as they are written: later passes rewrite them by their text
# (tape_local, tape_sites), and they call no code with debug info. (The other runtime helpers get
# locations: inlined into a derivative, the calls of the program's functions in them, a fixed
# point's step or a sort's comparator, take the location of the call of the helper.)
_TAPE_CALL = re.compile(r"@__enzyme_cc_(?:l?push(?:_nc)?|pop|l?reserve(?:_check)?|s?tape_\w+)\(")


def tag(lines: list, start: int, inst) -> None:
    """The instructions in lines[start:] (written for the primal instruction inst) get its
    location, where it has one."""
    loc = inst.md.get("!dbg")
    if loc is None or not _REF.fullmatch(loc):
        return
    suffix = ", !dbg " + loc
    for k in range(start, len(lines)):
        ln = lines[k]
        if "\n" in ln:
            lines[k] = "\n".join(_tag_one(x, suffix) for x in ln.split("\n"))
        else:
            lines[k] = _tag_one(ln, suffix)


def _tag_one(ln: str, suffix: str) -> str:
    s = ln.rstrip()
    if not s or s.endswith((":", "[", "{")) or ";" in s or "!dbg" in s or \
            s.lstrip().startswith(("define ", "declare ", "#dbg_")) or not _INST.match(s) or \
            _TAPE_CALL.search(s):
        return ln
    return s + suffix


def strip(lines: list) -> list:
    """The tags of `tag` removed (a derivative whose primal has no subprogram)."""
    return [_DBG_SUFFIX.sub("", ln) if "!dbg" in ln else ln for ln in lines]


def without_subprogram(header: str) -> str:
    """A `define` line's subprogram attachment removed: the header of a copy of a function
    (LLVM attaches a subprogram to one function only)."""
    return _HEADER_DBG.sub(" {", header)


class DebugScopes:
    """The module's debug metadata and the nodes the derivatives add (one per module round)."""

    def __init__(self, metadata: dict):
        self.md = metadata
        self.next = max((int(k[1:]) for k in metadata if k[1:].isdigit()), default=-1) + 1
        self.new: list[str] = []
        self._uniqued: dict[str, str] = {}

    def node(self, text: str, distinct: bool = False) -> str:
        """A new metadata node (identical uniqued nodes shared)."""
        if not distinct and text in self._uniqued:
            return self._uniqued[text]
        ref = f"!{self.next}"
        self.next += 1
        self.new.append(f"{ref} = {'distinct ' if distinct else ''}{text}")
        if not distinct:
            self._uniqued[text] = ref
        return ref

    def for_function(self, primal, name: str):
        """The FunctionScope of derivative `name` of the primal function, or None where the
        primal has no subprogram (or one this cannot read)."""
        sp = getattr(primal, "dbg", None)
        text = self.md.get(sp or "", "")
        if not text.startswith("distinct !DISubprogram("):
            return None
        file = _FIELD["file"].search(text)
        unit = _FIELD["unit"].search(text)
        if not file or not unit:
            return None

        def field(k):
            m = re.search(rf"\b{k}: ([^,)]+)", text)
            return m.group(1).strip() if m else None

        sp_flags = [f.strip() for f in (field("spFlags") or "").split("|")
                    if f.strip() not in ("", "DISPFlagMainSubprogram")]
        if "DISPFlagDefinition" not in sp_flags:
            return None
        flags = [f.strip() for f in (field("flags") or "").split("|")
                 if f.strip() in ("DIFlagPrototyped", "DIFlagArtificial")]
        plain = name.lstrip("@").strip('"')
        # (in LLVM's order; a field the primal's subprogram lacks is left out)
        fields = [("name", f'"{plain}"'), ("linkageName", f'"{plain}"'),
                  ("scope", file.group(1)), ("file", file.group(1)), ("line", field("line")),
                  ("type", field("type")), ("scopeLine", field("scopeLine")),
                  ("flags", " | ".join(flags) or None), ("spFlags", " | ".join(sp_flags)),
                  ("unit", unit.group(1)), ("keyInstructions", field("keyInstructions"))]
        fields = [f"{k}: {v}" for k, v in fields if v is not None]
        new_sp = self.node(f"!DISubprogram({', '.join(fields)})", distinct=True)
        return FunctionScope(self, sp, new_sp)


class FunctionScope:
    """One derivative's subprogram and the copies of the primal's locations in it."""

    def __init__(self, scopes: DebugScopes, old_sp: str, sp: str):
        self.scopes, self.old_sp, self.sp = scopes, old_sp, sp
        self._scope: dict[str, str | None] = {old_sp: sp}
        self._loc: dict[str, str | None] = {}
        self.line0 = scopes.node(f"!DILocation(line: 0, scope: {sp})")

    def resolve(self, lines: list) -> list:
        """The body's tagged locations moved into this subprogram; the other instructions get
        line 0 (the derivative's bookkeeping: with no location, an instruction inlined into the
        marker's caller would take no line at all, or the line before it)."""
        out = []
        for ln in lines:
            if "\n" in ln:
                out.append("\n".join(self.resolve(ln.split("\n"))))
                continue
            m = _DBG_SUFFIX.search(ln) if "!dbg" in ln else None
            if m:
                new = self.location(m.group(1))
                ln = ln[:m.start()] + (f", !dbg {new}" if new else "")
            if "!dbg" not in ln:
                ln = _tag_one(ln, f", !dbg {self.line0}")
            out.append(ln)
        return out

    def location(self, ref: str) -> str | None:
        """The copy of the primal's location `ref` in this subprogram (None: cannot move it)."""
        if ref in self._loc:
            return self._loc[ref]
        self._loc[ref] = None                    # (a cycle would be broken metadata)
        text = self.scopes.md.get(ref, "")
        distinct = text.startswith("distinct ")
        body = text[len("distinct "):] if distinct else text
        if not body.startswith("!DILocation("):
            return None
        scope, at = _FIELD["scope"].search(body), _FIELD["inlinedAt"].search(body)
        if scope is None:
            return None
        if at is not None:                       # code inlined before AD: its callee's scope
            new_at = self.location(at.group(1))  # stays, the chain of call sites moves
            if new_at is None:
                return None
            body = body[:at.start(1)] + new_at + body[at.end(1):]
        else:
            new_scope = self._moved_scope(scope.group(1))
            if new_scope is None:
                return None
            body = body[:scope.start(1)] + new_scope + body[scope.end(1):]
        self._loc[ref] = self.scopes.node(body, distinct)
        return self._loc[ref]

    def _moved_scope(self, ref: str) -> str | None:
        """The copy of a lexical scope of the primal's subprogram (None: not one of its)."""
        if ref in self._scope:
            return self._scope[ref]
        self._scope[ref] = None
        text = self.scopes.md.get(ref, "")
        distinct = text.startswith("distinct ")
        body = text[len("distinct "):] if distinct else text
        if not body.startswith(("!DILexicalBlock(", "!DILexicalBlockFile(")):
            return None
        parent = _FIELD["scope"].search(body)
        new_parent = self._moved_scope(parent.group(1)) if parent else None
        if new_parent is None:
            return None
        body = body[:parent.start(1)] + new_parent + body[parent.end(1):]
        self._scope[ref] = self.scopes.node(body, distinct)
        return self._scope[ref]
