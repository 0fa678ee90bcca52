"""The tape position in SSA values (docs/performance.md, "d: the tape position in registers").

Generated code pushes and pops with calls of `@__enzyme_cc_push/pop(ptr %t, i64 n)` on a header
{base, top, cap, deferred} in memory. LLVM cannot keep those fields in registers: the header is
passed to callees and to the out-of-line grow, so every push reloads top and cap and stores top
(a store of pushed data through `base` may alias the header). After the last AD round (the
higher-order rules recognize the plain helper calls, rules/tape.py), each function gets a local
copy `{base, top, cap}` of every tape header it pushes or pops on: pushes and pops work on the
copy (`__enzyme_cc_lpush`, `__enzyme_cc_pop` on the copy), which SROA promotes to SSA values once they are inlined.

The header stays the truth for everybody else: top is written back before every call that is
passed the header (an augmented or reverse callee, tape_end, ...) and at every return when the
header came in as a parameter; the copy is reloaded after such calls and at entry. Only headers
whose every use is a plain call argument are rewritten (anything else, e.g. reading top directly
as the reverse-vector driver does, keeps the plain helpers), so no other code can see the stale
top: the header is a local alloca or a parameter, and no pointer to it reaches a callee except
as an argument.
"""
from __future__ import annotations

import re

from enzyme_cc.ir.lexer import LOCAL as _VAL
_TAPE_CALL = re.compile(r"@__enzyme_cc_(push|pop|push_nc|reserve|reserve_check)\(ptr (" + _VAL +
                        r"), i64 ")
# helper on the header -> (helper on the local copy, whether it still takes the header): only the
# helpers that may grow the tape need the header; the others read {base, top, cap}, which the
# copy lays out as the header does
_LOCAL = {"push": ("lpush", True), "pop": ("pop", False), "push_nc": ("push_nc", False),
          "reserve": ("lreserve", True), "reserve_check": ("reserve_check", False)}
_DEFINE = re.compile(r"define [^@\n]*@")
_LABEL = re.compile(r'^\s*(?:[-\w.$]+|"[^"]*"):')
_CALL_LINE = re.compile(r"^\s*(?:" + _VAL + r"\s*=\s*)?(?:tail |notail )?call ")
_RET = re.compile(r"^\s*ret ")
# helpers that are passed the header but never read or write base/top/cap
_NO_SYNC = ("@__enzyme_cc_defer_free(",)


def lower(text: str) -> str:
    text = drop_unused_headers(text)
    if not _TAPE_CALL.search(text):
        return text

    def one(body):
        return "\n".join(_lower_function(body.split("\n"))) if _TAPE_CALL.search(body) else body
    return _each_function(text, one)


def _each_function(text: str, rewrite) -> str:
    """text with each function definition (from its define line to the first line that is
    "}") replaced by rewrite(definition)."""
    out, pos = [], 0
    while True:
        if pos == 0 and text.startswith("define "):
            start = 0
        else:
            start = text.find("\ndefine ", pos) + 1
            if start == 0:
                break
        end = text.find("\n}", start)
        while end >= 0 and text[end + 2:end + 3] not in ("\n", ""):
            end = text.find("\n}", end + 2)
        if end < 0:
            break
        end += 2
        out.append(text[pos:start])
        body = text[start:end]
        out.append(rewrite(body) if _DEFINE.match(body) else body)
        pos = end
    out.append(text[pos:])
    return "".join(out)


_START = re.compile(r"^\s*call void @__enzyme_cc_tape_start\(ptr (" + _VAL + r")\)\s*$")


def drop_unused_headers(text: str) -> str:
    """A gradient whose reverse needs nothing from its forward sweep (the derivative of a small
    function, folded to arithmetic) still started and ended a tape: an atomic exchange of the
    spare buffer and a call per gradient, more than such a derivative costs. A local header used
    by nothing but its alloca, tape_start and tape_end lines is dropped with them."""
    if "@__enzyme_cc_tape_start(" not in text:
        return text

    def one(body):
        if "@__enzyme_cc_tape_start(" not in body:
            return body
        lines, drop = body.split("\n"), set()
        inner = range(1, len(lines) - 1)
        for j in inner:
            start = _START.match(lines[j])
            if not start:
                continue
            use, t = _uses(start.group(1)), start.group(1)
            users = [i for i in inner if use.search(lines[i])]
            if all(i == j or _is_alloca(lines[i], t) or
                   lines[i].strip() == f"call void @__enzyme_cc_tape_end(ptr {t})"
                   for i in users):
                drop.update(users)
        return "\n".join(x for k, x in enumerate(lines) if k not in drop) if drop else body
    return _each_function(text, one)


def _is_alloca(line: str, name: str) -> bool:
    return re.match(r"^\s*" + re.escape(name) + r"\s*=\s*alloca ", line) is not None


def _uses(name: str):
    return re.compile(re.escape(name) + r'(?![-\w.$"])')


def _tapes(body: list[str]) -> list[str]:
    """The headers of this function's pushes and pops that can get a local copy."""
    cands = sorted({m.group(2) for x in body for m in _TAPE_CALL.finditer(x)})
    header = body[0]
    params = [t for t in cands if _uses(t).search(header)]
    ok = []
    for t in cands:
        use = _uses(t)
        if t in params:
            if len(params) > 1:
                continue            # two headers from the caller might be one: keep the helpers
        elif not any(_is_alloca(x, t) for x in body):
            continue
        good = True
        for x in body[1:]:
            if not use.search(x) or _is_alloca(x, t):
                continue
            if not _CALL_LINE.match(x) or "musttail" in x or \
                    re.match(r"^\s*" + re.escape(t) + r"\s*=", x):
                good = False
                break
        if good:
            ok.append(t)
    return ok


def _lower_function(body: list[str]) -> list[str]:
    tapes = _tapes(body)
    if not tapes:
        return body
    local = {t: f"%ad.tl{n}" for n, t in enumerate(tapes)}
    params = [t for t in tapes if _uses(t).search(body[0])]
    uses = {t: _uses(t) for t in tapes}
    out = [body[0]]
    start = 1
    while start < len(body) and (not body[start].strip() or body[start].lstrip().startswith(";")):
        out.append(body[start])
        start += 1
    if start < len(body) and _LABEL.match(body[start]):     # the copy goes into the entry block
        out.append(body[start])
        start += 1
    for t in tapes:
        out.append(f"  {local[t]} = alloca {{ ptr, i64, i64 }}, align 8")
    for t in params:
        out.append(f"  call void @__enzyme_cc_tape_get(ptr {local[t]}, ptr {t})")
    for x in body[start:]:
        if "call" not in x and "ret" not in x and "@__enzyme_cc_" not in x:
            # (most lines: each test below needs one of these)
            out.append(x)
            continue
        m = _TAPE_CALL.search(x)
        if m and m.group(2) in local:
            t = m.group(2)
            name, header = _LOCAL[m.group(1)]
            x = x.replace(m.group(0), f"@__enzyme_cc_{name}(" + (f"ptr {t}, " if header else "") +
                          f"ptr {local[t]}, i64 ")
            out.append(x)
            continue
        if _RET.match(x):
            out.extend(f"  call void @__enzyme_cc_tape_put(ptr {t}, ptr {local[t]})" for t in params)
            out.append(x)
            continue
        passed = [t for t in tapes if uses[t].search(x)] if _CALL_LINE.match(x) else []
        if passed and not any(h in x for h in _NO_SYNC):
            fresh = "@__enzyme_cc_tape_start(" in x     # overwrites the whole header
            if not fresh:
                out.extend(f"  call void @__enzyme_cc_tape_put(ptr {t}, ptr {local[t]})"
                           for t in passed)
            out.append(x)
            out.extend(f"  call void @__enzyme_cc_tape_get(ptr {local[t]}, ptr {t})" for t in passed)
            continue
        out.append(x)
    return out
