"""x86 SIMD intrinsics with a plain IR equivalent, rewritten at the merge (before the pre-AD
optimization) so that AD sees ordinary instructions it has rules for. Code built for AVX or
AVX-512 (`-march=native`) reaches them through Eigen's packet math and through hand-written
intrinsics (`_mm256_max_pd`, `_mm512_max_pd`, `_mm256_hadd_pd`): clang keeps these as
`llvm.x86.*` calls.

- max/min (`sse.max.ps`, `sse2.max.pd`, `avx.max.pd.256`, `avx512.max.pd.512` with the current
  rounding mode, and the min forms): per lane `a > b ? a : b` (`<` for min), the second operand
  when either is NaN or both are zeros, which is exactly `select (fcmp ogt a, b), a, b`;
- horizontal add and subtract (`sse3.hadd.pd`, `avx.hadd.pd.256`, ... `hsub`): the pairs of
  adjacent elements of a and b, interleaved per 128-bit lane, as two shuffles and an fadd/fsub;
- alternating subtract and add (`sse3.addsub.pd`, `avx.addsub.ps.256`, ...: even lanes a - b,
  odd lanes a + b) as an fsub, an fadd and a shuffle of the two.
"""
from __future__ import annotations

import re

_CALL = re.compile(
    r'^(?P<ind>[ \t]*)(?P<res>%[-\w.$]+) = (?:tail |musttail |notail )?call (?:[a-z]+ )*?'
    r'(?P<ty><(?P<n>\d+) x (?P<el>double|float)>) @llvm\.x86\.(?P<name>[a-z0-9.]+)\('
    r'(?P=ty) (?P<a>%[-\w.$]+), (?P=ty) (?P<b>%[-\w.$]+)(?P<round>, i32 4)?\)[^\n]*$', re.M)

_MINMAX = {"sse.max.ps": 4, "sse.min.ps": 4, "sse2.max.pd": 2, "sse2.min.pd": 2,
           "avx.max.pd.256": 4, "avx.min.pd.256": 4, "avx.max.ps.256": 8, "avx.min.ps.256": 8,
           "avx512.max.pd.512": 8, "avx512.min.pd.512": 8, "avx512.max.ps.512": 16,
           "avx512.min.ps.512": 16}
# the scalar forms (`_mm_min_ss`, `_mm_max_sd`): lane 0 as above, the other lanes a's
_SCALAR_MINMAX = {"sse.max.ss": 4, "sse.min.ss": 4, "sse2.max.sd": 2, "sse2.min.sd": 2}
_ADDSUB = {"sse3.addsub.pd": 2, "sse3.addsub.ps": 4, "avx.addsub.pd.256": 4,
           "avx.addsub.ps.256": 8}
_HORIZONTAL = {"sse3.hadd.pd": 2, "sse3.hsub.pd": 2, "sse3.hadd.ps": 4, "sse3.hsub.ps": 4,
               "avx.hadd.pd.256": 4, "avx.hsub.pd.256": 4, "avx.hadd.ps.256": 8,
               "avx.hsub.ps.256": 8}


def _horizontal_masks(n: int, el: str):
    """(first, second) shuffle masks of a horizontal op on n lanes of el."""
    lane = 2 if el == "double" else 4           # elements per 128-bit lane
    first, second = [], []
    for base in range(0, n, lane):
        for src in (0, n):                       # a's pairs, then b's, within the 128-bit lane
            for k in range(0, lane, 2):
                first.append(src + base + k)
                second.append(src + base + k + 1)
    return first, second


def _rewrite(m) -> str:
    name, n, el = m["name"], int(m["n"]), m["el"]
    ind, res, ty, a, b = m["ind"], m["res"], m["ty"], m["a"], m["b"]
    tag = res[1:].strip('"')
    if name in _MINMAX and _MINMAX[name] == n and bool(m["round"]) == name.startswith("avx512"):
        pred = "ogt" if ".max." in name else "olt"
        cmp = f"%x86.cmp.{tag}"
        return (f"{ind}{cmp} = fcmp {pred} {ty} {a}, {b}\n"
                f"{ind}{res} = select <{n} x i1> {cmp}, {ty} {a}, {ty} {b}")
    if name in _SCALAR_MINMAX and _SCALAR_MINMAX[name] == n and not m["round"]:
        pred = "ogt" if ".max." in name else "olt"
        a0, b0, cmp, pick = (f"%x86.{k}.{tag}" for k in ("a0", "b0", "cmp", "pick"))
        return (f"{ind}{a0} = extractelement {ty} {a}, i32 0\n"
                f"{ind}{b0} = extractelement {ty} {b}, i32 0\n"
                f"{ind}{cmp} = fcmp {pred} {el} {a0}, {b0}\n"
                f"{ind}{pick} = select i1 {cmp}, {el} {a0}, {el} {b0}\n"
                f"{ind}{res} = insertelement {ty} {a}, {el} {pick}, i32 0")
    if name in _ADDSUB and _ADDSUB[name] == n and not m["round"]:
        # even lanes a - b, odd lanes a + b (Eigen's SSE3 complex and quaternion products)
        sub, add = f"%x86.sub.{tag}", f"%x86.add.{tag}"
        mask = ", ".join(f"i32 {k if k % 2 == 0 else n + k}" for k in range(n))
        return (f"{ind}{sub} = fsub {ty} {a}, {b}\n"
                f"{ind}{add} = fadd {ty} {a}, {b}\n"
                f"{ind}{res} = shufflevector {ty} {sub}, {ty} {add}, <{n} x i32> <{mask}>")
    if name in _HORIZONTAL and _HORIZONTAL[name] == n and not m["round"]:
        first, second = _horizontal_masks(n, el)
        mask = lambda idx: f"<{n} x i32> <" + ", ".join(f"i32 {i}" for i in idx) + ">"
        lo, hi = f"%x86.lo.{tag}", f"%x86.hi.{tag}"
        op = "fadd" if ".hadd." in name else "fsub"
        return (f"{ind}{lo} = shufflevector {ty} {a}, {ty} {b}, {mask(first)}\n"
                f"{ind}{hi} = shufflevector {ty} {a}, {ty} {b}, {mask(second)}\n"
                f"{ind}{res} = {op} {ty} {lo}, {hi}")
    return m.group(0)


# rounding of each lane by the immediate's low bits (SSE4.1 ROUNDPD/PS, AVX's 256-bit form):
# 0 nearest even, 1 down, 2 up, 3 toward zero; bit 2: the current mode (nearest even unless the
# program changed it: rint)
_ROUND = re.compile(
    r'^(?P<ind>[ \t]*)(?P<res>%[-\w.$]+) = (?:tail |musttail |notail )?call (?:[a-z]+ )*?'
    r'(?P<ty><(?P<n>\d+) x (?P<el>double|float)>) @llvm\.x86\.'
    r'(?:sse41\.round\.p[sd]|avx\.round\.p[sd]\.256)\((?P=ty) (?P<a>%[-\w.$]+), '
    r'i32 (?P<imm>\d+)\)[^\n]*$', re.M)
_ROUNDING = {0: "roundeven", 1: "floor", 2: "ceil", 3: "trunc"}
# AVX-512's VRNDSCALE (Eigen's float floor in expm1 and exp under -mavx512f) with every lane
# computed (mask all ones), the current rounding, and no scale (immediate below 16: whole
# numbers): the same rounding; bit 3 only suppresses the precision exception
_ROUND512 = re.compile(
    r'^(?P<ind>[ \t]*)(?P<res>%[-\w.$]+) = (?:tail |musttail |notail )?call (?:[a-z]+ )*?'
    r'(?P<ty><(?P<n>\d+) x (?P<el>double|float)>) @llvm\.x86\.avx512\.mask\.rndscale\.'
    r'p[sd]\.512\((?P=ty) (?P<a>%[-\w.$]+), i32 (?P<imm>\d|1[0-5]), (?P=ty) [^,()]+, '
    r'i(?:8|16) -1, i32 4\)[^\n]*$', re.M)


def _lanes_intrinsic(op: str, m) -> str:
    """LLVM's intrinsic `op` on the vector type of match m (`@llvm.floor.v2f64`)."""
    return f"@llvm.{op}.v{m['n']}f{64 if m['el'] == 'double' else 32}"


def _round_op(m) -> str:
    imm = int(m["imm"])
    return "rint" if imm & 4 else _ROUNDING[imm & 3]


def _round(m) -> str:
    ty = m["ty"]
    return f"{m['ind']}{m['res']} = call {ty} {_lanes_intrinsic(_round_op(m), m)}({ty} {m['a']})"


# float lanes to int32 lanes in the current rounding mode (nearest even), CVTPD2DQ/CVTPS2DQ
# (Eigen's vectorized exp and log take the exponent so), or toward zero, CVTTPD2DQ/CVTTPS2DQ
# (`_mm_cvttps_epi32`: Eigen's float exp); SSE2's double form zero-fills the upper half of its
# <4 x i32>
_CVT = re.compile(
    r'^(?P<ind>[ \t]*)(?P<res>%[-\w.$]+) = (?:tail |musttail |notail )?call (?:[a-z]+ )*?'
    r'<(?P<m>\d+) x i32> @llvm\.x86\.(?:sse2\.cvtt?p[sd]2dq|avx\.cvtt?\.p[sd]2dq\.256)'
    r'\((?P<ty><(?P<n>\d+) x (?P<el>double|float)>) (?P<a>%[-\w.$]+)\)'
    r'[^\n]*$', re.M)


# AVX-512's forms with every lane converted (mask all ones) in the current rounding mode
_CVT512 = re.compile(
    r'^(?P<ind>[ \t]*)(?P<res>%[-\w.$]+) = (?:tail |musttail |notail )?call (?:[a-z]+ )*?'
    r'<(?P<m>\d+) x i32> @llvm\.x86\.avx512\.mask\.cvtt?p[sd]2dq\.512'
    r'\((?P<ty><(?P<n>\d+) x (?P<el>double|float)>) (?P<a>%[-\w.$]+), <(?P=m) x i32> [^,()]+, '
    r'i(?:8|16) -1, i32 4\)[^\n]*$', re.M)


def _cvt_op(m) -> str:
    return "trunc" if ".cvtt" in m[0] else "roundeven"


def _cvt(m) -> str:
    ind, res, ty, n, mm = m["ind"], m["res"], m["ty"], int(m["n"]), int(m["m"])
    tag = res[1:].strip('"')
    out = [f"{ind}%x86.rnd.{tag} = call {ty} {_lanes_intrinsic(_cvt_op(m), m)}({ty} {m['a']})"]
    if mm == n:
        return "\n".join(out + [f"{ind}{res} = fptosi {ty} %x86.rnd.{tag} to <{n} x i32>"])
    mask = ", ".join(f"i32 {k}" for k in range(mm))
    return "\n".join(out + [f"{ind}%x86.int.{tag} = fptosi {ty} %x86.rnd.{tag} to <{n} x i32>",
                             f"{ind}{res} = shufflevector <{n} x i32> %x86.int.{tag}, <{n} x i32> "
                             f"zeroinitializer, <{mm} x i32> <{mask}>"])


# the scalar approximate reciprocal (square root), `_mm_rsqrt_ss`, `_mm_rcp_ss`: lane 0 of the
# packed form (the same approximation), the other lanes a's; the packed form has a rule
_APPROX_SS = re.compile(
    r'^(?P<ind>[ \t]*)(?P<res>%[-\w.$]+) = (?:tail |musttail |notail )?call (?:[a-z]+ )*?'
    r'<4 x float> @llvm\.x86\.sse\.(?P<op>rsqrt|rcp)\.ss\(<4 x float> (?P<a>%[-\w.$]+)\)'
    r'[^\n]*$', re.M)


def _approx_ss(m) -> str:
    # (the packed form gets 1.0 in the upper lanes: a's there may be negative or zero, whose
    # infinite or NaN partials would turn their zero adjoints into NaN)
    ind, res, a = m["ind"], m["res"], m["a"]
    tag = res[1:].strip('"')
    low, full = f"%x86.low.{tag}", f"%x86.full.{tag}"
    ones = "<float 1.0, float 1.0, float 1.0, float 1.0>"
    return (f"{ind}{low} = shufflevector <4 x float> {a}, <4 x float> {ones}, "
            "<4 x i32> <i32 0, i32 4, i32 4, i32 4>\n"
            f"{ind}{full} = call <4 x float> @llvm.x86.sse.{m['op']}.ps(<4 x float> {low})\n"
            f"{ind}{res} = shufflevector <4 x float> {full}, <4 x float> {a}, "
            "<4 x i32> <i32 0, i32 5, i32 6, i32 7>")


# AVX-512's 14-bit approximate reciprocal (square root), `_mm512_rsqrt14_ps` (Eigen's float sqrt
# under AVX-512): computed on every lane with the input itself as the pass-through, which the
# rules in stdlib_rules/libm.toml take (its partial is zero: no lane passes through); a mask
# other than all ones becomes a select of the result and the caller's pass-through
_APPROX14 = re.compile(
    r'^(?P<ind>[ \t]*)(?P<res>%[-\w.$]+) = (?:tail |musttail |notail )?call (?:[a-z]+ )*?'
    r'(?P<ty><(?P<n>\d+) x (?:float|double)>) @llvm\.x86\.avx512\.(?P<op>rsqrt14|rcp14)\.'
    r'(?P<el>ps|pd)\.512\((?P=ty) (?P<a>%[-\w.$]+), (?P=ty) (?P<src>[^,()]+|<[^>]*>), '
    r'(?P<mty>i(?:8|16)) (?P<mask>[^,()\s]+)\)[^\n]*$', re.M)


def _approx14(m) -> str:
    ind, res, ty, a, n = m["ind"], m["res"], m["ty"], m["a"], int(m["n"])
    callee = f"@llvm.x86.avx512.{m['op']}.{m['el']}.512"
    full = f"call {ty} {callee}({ty} {a}, {ty} {a}, {m['mty']} -1)"
    if m["mask"] == "-1":
        return f"{ind}{res} = {full}"
    tag = res[1:].strip('"')
    lanes = f"%x86.lanes.{tag}"
    return (f"{ind}%x86.all.{tag} = {full}\n"
            f"{ind}{lanes} = bitcast {m['mty']} {m['mask']} to <{n} x i1>\n"
            f"{ind}{res} = select <{n} x i1> {lanes}, {ty} %x86.all.{tag}, {ty} {m['src']}")


def rewrite(text: str) -> str:
    """The module with each x86 max/min, horizontal add/subtract, rounding and conversion call
    replaced by plain IR with the same result (scalar rsqrt/rcp: by their packed form). The
    patterns are of one instruction line each: only the lines naming an x86 intrinsic are
    searched (a Rust program's AD module, 27 MB of std's text, has a few: 1.8 s before)."""
    if "@llvm.x86." not in text:
        return text
    lines = text.split("\n")
    declares: set = set()           # (type, intrinsic) the rewritten code calls
    for k, line in enumerate(lines):
        if "@llvm.x86." in line and not line.startswith("declare "):
            lines[k] = _rewrite_line(line, declares)
    text = "\n".join(lines)
    for ty, name in sorted(declares):
        if f"declare {ty} {name}(" not in text:
            text += f"\ndeclare {ty} {name}({ty})\n"
    return text


def _rewrite_line(line: str, declares: set) -> str:
    line = _CALL.sub(_rewrite, line)
    line = _APPROX14.sub(_approx14, line)
    declares |= {("<4 x float>", f"@llvm.x86.sse.{m['op']}.ps") for m in _APPROX_SS.finditer(line)}
    line = _APPROX_SS.sub(_approx_ss, line)
    for pattern, fix, op in ((_CVT, _cvt, _cvt_op), (_CVT512, _cvt, _cvt_op),
                             (_ROUND, _round, _round_op),
                             (_ROUND512, _round, _round_op)):
        used = {(m["ty"], _lanes_intrinsic(op(m), m)) for m in pattern.finditer(line)}
        if used:
            declares |= used
            line = pattern.sub(fix, line)
    return line
