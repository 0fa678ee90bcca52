"""Calls that return a pointer into their first argument's object, or null, made that argument
plus an offset before AD: C++'s `dynamic_cast` (`__dynamic_cast(p, from, to, hint)` adjusts p
to the base or derived subobject). The runtime routine has no bitcode and reads only the
object's type information; written as `select(r == null, null, p + (r - p))`, its result gets
the shadow of p at the same offset, like any address computed from p, and the call itself is
inactive (stdlib_rules/inactive.toml)."""
from __future__ import annotations

import re

_CALL = re.compile(r"^(\s*)(%[-\w.$]+) = (?:tail |notail |musttail )?call (?:[^@]*?)ptr "
                   r"@__dynamic_cast\(ptr (?:[^%,]*? )?(%[-\w.$]+|@[-\w.$]+)")


def offsets_from_argument(text: str) -> str:
    """The module text with each `%r = call ptr @__dynamic_cast(ptr %p, ...)` renamed and %r
    redefined right after it as p plus the offset the call found (null where it found none)."""
    if "@__dynamic_cast(" not in text:
        return text
    out, count = [], 0
    for line in text.split("\n"):
        m = _CALL.match(line)
        if not m:
            out.append(line)
            continue
        indent, r, p = m.groups()
        count += 1
        raw = f"%ecc.dyncast.{count}"
        out.append(indent + raw + line[len(indent) + len(r):])
        out += [f"{indent}%ecc.dyncast.{count}.r = ptrtoint ptr {raw} to i64",
                f"{indent}%ecc.dyncast.{count}.p = ptrtoint ptr {p} to i64",
                f"{indent}%ecc.dyncast.{count}.off = sub i64 %ecc.dyncast.{count}.r, "
                f"%ecc.dyncast.{count}.p",
                f"{indent}%ecc.dyncast.{count}.at = getelementptr i8, ptr {p}, i64 "
                f"%ecc.dyncast.{count}.off",
                f"{indent}%ecc.dyncast.{count}.null = icmp eq ptr {raw}, null",
                f"{indent}{r} = select i1 %ecc.dyncast.{count}.null, ptr null, ptr "
                f"%ecc.dyncast.{count}.at"]
    return "\n".join(out)
