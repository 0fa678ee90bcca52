"""The INTENT of a Fortran routine's dummy arguments, read from its source: the compiled code
does not carry it (flang's IR marks no intent(in) pointer read-only, and an array handed to
another routine looks written), so signature inference asks the source what the declaration says.

A statement reader, not a parser: comments and `&` continuations are joined away, the routine
is found by its header, and each type declaration or INTENT statement of its specification part
(up to its first `contains` or `end`, interface blocks skipped) gives `name -> in|out|inout` for
the names after `::`."""
from __future__ import annotations

import os
import re

_INTENT = re.compile(r"\bintent\s*\(\s*(in\s*out|inout|in|out)\s*\)", re.I)
_END = re.compile(r"^(end|contains)\b(?!\s*(interface|type|associate|block|do|if|select|where|"
                  r"forall|enum)\b)", re.I)


def _statements(text: str, fixed: bool = False) -> list[str]:
    """The source's statements: comments cut (a `!` outside quotes; in fixed form also a line
    with C, c or * in column 1), `&` continuations joined, `;` separated statements split."""
    out, pending = [], ""
    for raw in text.splitlines():
        if fixed and raw[:1] in ("C", "c", "*"):
            continue
        line, quote = [], None
        for c in raw:
            if quote:
                quote = None if c == quote else quote
            elif c in "'\"":
                quote = c
            elif c == "!":
                break
            line.append(c)
        s = "".join(line).strip()
        if pending and s.startswith("&"):
            s = s[1:].lstrip()
        if s.endswith("&"):
            pending += s[:-1] + " "
            continue
        s, pending = pending + s, ""
        out += [part.strip() for part in s.split(";") if part.strip()]
    return out


def _top_level_names(decl: str) -> list[str]:
    """The entity names of a declaration's list `x(n), y = 1.0, z`: split at top-level commas,
    each name before its dimensions or initializer."""
    names, depth, cur = [], 0, ""
    for c in decl + ",":
        if c == "," and depth == 0:
            m = re.match(r"\s*([A-Za-z]\w*)", cur)
            if m:
                names.append(m.group(1).lower())
            cur = ""
            continue
        depth += (c in "([") - (c in ")]")
        cur += c
    return names


def intents(sources, routine: str) -> dict[str, str]:
    """{dummy name (lower case): 'in', 'out' or 'inout'} of Fortran routine `routine` (or
    `module::routine`, or flang's symbol `routine_`) in sources [(file name, language, bytes)];
    {} where it is not found."""
    proc = routine.lower().rpartition("::")[2]
    if proc.endswith("_") and not re.search(rf"\b{re.escape(proc)}\s*\(", b"".join(
            d for _, lg, d in sources if lg == "fortran").decode("utf-8", "replace").lower()):
        proc = proc[:-1]
    header = re.compile(r"^(?:[\w\s(),=*]*?\s)?(?:subroutine|function)\s+" + re.escape(proc)
                        + r"\s*(\(|$)", re.I)
    for name, lang, data in sources:
        if lang != "fortran":
            continue
        fixed = os.path.splitext(name)[1].lower() in (".f", ".for", ".ftn", ".f77")
        stmts = _statements(data.decode("utf-8", "replace"), fixed)
        for k, s in enumerate(stmts):
            if header.match(s):
                return _routine_intents(stmts[k + 1:])
    return {}


def _routine_intents(stmts) -> dict[str, str]:
    found, interface = {}, 0
    for s in stmts:
        low = s.lower()
        if re.match(r"(abstract\s+)?interface\b", low):
            interface += 1
            continue
        if interface:
            interface -= bool(re.match(r"end\s*interface\b", low))
            continue
        if _END.match(low):
            break
        m = _INTENT.search(s)
        if not m or "::" not in s or m.start() > s.index("::"):
            continue
        kind = re.sub(r"\s", "", m.group(1).lower())      # (`in out` is `inout`)
        for name in _top_level_names(s.split("::", 1)[1]):
            found[name] = kind
    return found
