"""LLVM's floating-point vector reductions as scalar code, rewritten at the merge (before the
pre-AD optimization), so that AD sees extracts and the scalar operations it has rules for.

Objects built with full LTO (`-flto`) carry LLVM's pre-link pipeline, whose vectorizers turn a
max loop, a min loop or a fast-math sum into `llvm.vector.reduce.*` calls; the link's own
pipeline vectorizes again after AD, so nothing is lost.

- `reduce.fadd(start, v)` / `reduce.fmul(start, v)`: start, then each lane in order, with the
  call's fast-math flags (the ordered form is exactly that; a reassociating one may take any
  order);
- `reduce.fmax` / `fmin` / `fmaximum` / `fminimum`: the lanes folded with the scalar
  `maxnum` / `minnum` / `maximum` / `minimum`, whose semantics the reductions are defined by.
"""
from __future__ import annotations

import re

from enzyme_cc.ir.inst import FAST_MATH_FLAGS_RE

_CALL = re.compile(
    r'^(?P<ind>[ \t]*)(?P<res>%[-\w.$]+) = (?:tail |musttail |notail )?call '
    r'(?P<flags>' + FAST_MATH_FLAGS_RE + r')(?:[a-z]+ )*?'
    r'(?P<el>double|float) @llvm\.vector\.reduce\.(?P<op>fadd|fmul|fmax|fmin|fmaximum|fminimum)'
    r'\.v(?P<n>\d+)f(?:32|64)\((?:(?P=el) (?P<start>[^,()]+), )?'
    r'<(?P=n) x (?P=el)> (?P<v>%[-\w.$]+|zeroinitializer)\)[^\n]*$', re.M)

_FOLD = {"fmax": "maxnum", "fmin": "minnum", "fmaximum": "maximum", "fminimum": "minimum"}


def rewrite(text: str) -> str:
    if "@llvm.vector.reduce.f" not in text:
        return text
    needed: set[str] = set()
    count = [0]

    def expand(m) -> str:
        ind, res, el, op, n = m["ind"], m["res"], m["el"], m["op"], int(m["n"])
        flags = m["flags"]
        count[0] += 1
        tmp = f"%ad.vred{count[0]}"        # (res may be numbered: `%36.x` is no name)
        lanes, out = [], []
        for k in range(n):
            e = f"{tmp}.l{k}"
            out.append(f"{ind}{e} = extractelement <{n} x {el}> {m['v']}, i64 {k}")
            lanes.append(e)
        if op in ("fadd", "fmul"):
            acc = m["start"].strip()
            for k, e in enumerate(lanes):
                nxt = res if k == n - 1 else f"{tmp}.a{k}"
                out.append(f"{ind}{nxt} = {op} {flags}{el} {acc}, {e}")
                acc = nxt
            return "\n".join(out)
        fn = f"llvm.{_FOLD[op]}.{'f64' if el == 'double' else 'f32'}"
        needed.add(f"declare {el} @{fn}({el}, {el})")
        acc = lanes[0]
        for k, e in enumerate(lanes[1:], 1):
            nxt = res if k == n - 1 else f"{tmp}.a{k}"
            out.append(f"{ind}{nxt} = call {flags}{el} @{fn}({el} {acc}, {el} {e})")
            acc = nxt
        if n == 1:
            out.append(f"{ind}{res} = fadd {el} {acc}, -0.0")
        return "\n".join(out)

    text = _CALL.sub(expand, text)
    missing = [d for d in sorted(needed) if d.split("@", 1)[1].split("(")[0] not in
               re.findall(r"^declare [^@\n]*@([-\w.$]+)\(", text, re.M)]
    return text + ("\n" + "\n".join(missing) + "\n" if missing else "")
