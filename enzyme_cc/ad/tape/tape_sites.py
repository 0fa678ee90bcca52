"""ENZYME_CC_TAPE_STATS=sites: which pushes fill the tape (a measuring aid, docs/performance.md).

With the switch set when the derivative is built, every push of a generated function counts its
bytes and calls per site (the function and the block it pushes from), and the end of each
gradient prints, after the tape's totals, every site that pushed at least 1 % of the gradient's
bytes, named as ENZYME_CC_PRINT_ACTIVITY names blocks. The counts are atomic adds: a site an
OpenMP team pushes from counts every thread.
"""
from __future__ import annotations

import os
import re

from enzyme_cc.ir.lexer import c_string

_PUSH = re.compile(r"^\s*%[-\w.]+ = call ptr @__enzyme_cc_(?:push|lpush|push_nc)\("
                   r"ptr [^,]+, (?:ptr [^,]+, )?i64 ([^)]+)\)\s*$")
_DEFINE = re.compile(r'^define [^@]*@("[^"]+"|[-\w.$]+)\(')
_LABEL = re.compile(r'^("[^"]+"|[-\w.$]+):')
# the end of tape_end's report of the tape's totals (ad/tape/tape.py): the sites' report follows
_END = "  store i64 0, ptr @__enzyme_cc_stat_peak\n"


def tape_sites() -> bool:
    return os.environ.get("ENZYME_CC_TAPE_STATS", "") == "sites"


def instrument(text: str) -> str:
    """The module with a counter after every push of a generated function, and tape_end's
    report of the sites (text unchanged when it has no push)."""
    out, sites, fn, block = [], {}, None, None
    for line in text.split("\n"):
        m = _DEFINE.match(line)
        if m:
            fn, block = m.group(1).strip('"'), "entry"
        elif line.startswith("}"):
            fn = None
        elif fn is not None and _LABEL.match(line):
            block = _primal_label(_LABEL.match(line).group(1).strip('"'))
        out.append(line)
        p = _PUSH.match(line)
        if p and fn is not None and not fn.startswith("__enzyme_cc_"):
            k = sites.setdefault(f"{fn} {block}", len(sites))
            out.append(f"  call void @__enzyme_cc_site_count(i64 {k}, i64 {p.group(1)})")
    text = "\n".join(out)
    start = text.find("define internal void @__enzyme_cc_tape_end(")
    at = text.find(_END, start) if start >= 0 else -1
    if not sites or at < 0:
        return text
    at += len(_END)
    text = text[:at] + "  call void @__enzyme_cc_site_report()\n" + text[at:]
    return text + _runtime(list(sites))


def _primal_label(label: str) -> str:
    """The primal block a forward sweep's block copies (reverse.py names `%x` `n.x` and `%7`
    `v7`), as ENZYME_CC_PRINT_ACTIVITY names it; a generated block keeps its own name."""
    if label.startswith("n."):
        return "%" + label[2:]
    return "%" + label[1:] if re.fullmatch(r"v\d+", label) else label


def _runtime(sites: list[str]) -> str:
    n = len(sites)
    names = [c_string(f"@__enzyme_cc_site_name{k}", s.encode() + b"\0")
             for k, s in enumerate(sites)]
    table = ", ".join(f"ptr @__enzyme_cc_site_name{k}" for k in range(n))
    fmt = "enzyme-cc: tape site %s: %lu bytes in %lu pushes\\0A\\00"   # 2 escapes of 3 characters
    return "\n".join(names) + f"""
@__enzyme_cc_site_names = private unnamed_addr constant [{n} x ptr] [{table}]
@__enzyme_cc_site_bytes = internal global [{n} x i64] zeroinitializer, align 8
@__enzyme_cc_site_pushes = internal global [{n} x i64] zeroinitializer, align 8
@__enzyme_cc_site_fmt = private unnamed_addr constant [{len(fmt) - 2 * 2} x i8] c"{fmt}"

define internal void @__enzyme_cc_site_count(i64 %k, i64 %n) alwaysinline nounwind {{
entry:
  %b = getelementptr inbounds [{n} x i64], ptr @__enzyme_cc_site_bytes, i64 0, i64 %k
  %ob = atomicrmw add ptr %b, i64 %n monotonic
  %c = getelementptr inbounds [{n} x i64], ptr @__enzyme_cc_site_pushes, i64 0, i64 %k
  %oc = atomicrmw add ptr %c, i64 1 monotonic
  ret void
}}

; the sites with at least 1 % of the bytes, in the order of the module; the counts start again
define internal void @__enzyme_cc_site_report() nounwind {{
entry:
  br label %sum
sum:
  %k = phi i64 [ 0, %entry ], [ %k1, %sum ]
  %t = phi i64 [ 0, %entry ], [ %t1, %sum ]
  %bp = getelementptr inbounds [{n} x i64], ptr @__enzyme_cc_site_bytes, i64 0, i64 %k
  %b = load i64, ptr %bp
  %t1 = add i64 %t, %b
  %k1 = add i64 %k, 1
  %more = icmp ult i64 %k1, {n}
  br i1 %more, label %sum, label %print
print:
  %j = phi i64 [ 0, %sum ], [ %j1, %next ]
  %xp = getelementptr inbounds [{n} x i64], ptr @__enzyme_cc_site_bytes, i64 0, i64 %j
  %x = load i64, ptr %xp
  %cp = getelementptr inbounds [{n} x i64], ptr @__enzyme_cc_site_pushes, i64 0, i64 %j
  %c = load i64, ptr %cp
  store i64 0, ptr %xp
  store i64 0, ptr %cp
  %x100 = mul i64 %x, 100
  %big = icmp uge i64 %x100, %t1
  %some = icmp ne i64 %x, 0
  %show = and i1 %big, %some
  br i1 %show, label %show.it, label %next
show.it:
  %np = getelementptr inbounds [{n} x ptr], ptr @__enzyme_cc_site_names, i64 0, i64 %j
  %name = load ptr, ptr %np
  %r = call i32 (i32, ptr, ...) @dprintf(i32 2, ptr @__enzyme_cc_site_fmt, ptr %name, i64 %x, i64 %c)
  br label %next
next:
  %j1 = add i64 %j, 1
  %again = icmp ult i64 %j1, {n}
  br i1 %again, label %print, label %done
done:
  ret void
}}
"""
