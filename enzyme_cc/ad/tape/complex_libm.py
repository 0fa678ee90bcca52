"""C99 complex arithmetic and functions in differentiable form.

compiler-rt's complex multiply and divide (`__muldc3`, `__divsc3`, ...) and libm's complex
functions (`cexp`, `cpowf`, ...) have no bitcode. In differentiated code each call is redirected
(synthesis/prepare.py) to an internal helper computing the same value from real operations that
have derivative rules (libm's real functions, LLVM intrinsics). The formulas are the textbook
ones, arranged not to overflow where the result does not (tanh and tan of a large argument);
they differ from the library's only for infinite or NaN operands and on branch cuts' signed
zeros, where the derivative is undefined anyway. The inverse functions (casin, cacos, catan and
their hyperbolic forms) are not here: the formulas through clog and csqrt lose the library's
accuracy near their branch points, and a call of one stays refused by name.

ABI (x86-64, as clang emits the calls): a `double _Complex` argument is two doubles and the
result `{ double, double }`; a `float _Complex` argument is one `<2 x float>` and the result
`<2 x float>`; compiler-rt's float multiply and divide take four floats.
"""
from __future__ import annotations

import re

# tanh and tan: {h} the part under the hyperbolic functions, {t} the one under the trigonometric
# ones; {th} = tanh 2h and {sc} = sin 2t sech 2h, each over 1 + cos 2t sech 2h, are the parts
# ({{t}}: the type, filled in later)
_TANH = """
  %a2 = fmul {{t}} {h}, 2.000000e+00
  %b2 = fmul {{t}} {t}, 2.000000e+00
  %fa = call {{t}} @llvm.fabs.{{i}}({{t}} %a2)
  %na = fneg {{t}} %fa
  %e = call {{t}} @llvm.exp.{{i}}({{t}} %na)
  %ee = fmul {{t}} %e, %e
  %e1 = fadd {{t}} %ee, 1.000000e+00
  %e2 = fmul {{t}} %e, 2.000000e+00
  %sech = fdiv {{t}} %e2, %e1
  %tanh = call {{t}} @tanh{{f}}({{t}} %a2)
  %co = call {{t}} @llvm.cos.{{i}}({{t}} %b2)
  %si = call {{t}} @llvm.sin.{{i}}({{t}} %b2)
  %q = fmul {{t}} %co, %sech
  %den = fadd {{t}} %q, 1.000000e+00
  %sin = fmul {{t}} %si, %sech
  {th} = fdiv {{t}} %tanh, %den
  {sc} = fdiv {{t}} %sin, %den
"""
# name -> (complex arguments, result kind, IR computing %re and %im (or %r) from %a, %b (the
# first argument) and %c, %d (the second)); {t} is the type, {i} the intrinsic suffix, {f}
# libm's float suffix
_FORMULAS = {
    "cexp": (1, "complex", """
  %e = call {t} @llvm.exp.{i}({t} %a)
  %co = call {t} @llvm.cos.{i}({t} %b)
  %si = call {t} @llvm.sin.{i}({t} %b)
  %re = fmul {t} %e, %co
  %im = fmul {t} %e, %si
"""),
    "cabs": (1, "real", """
  %r = call {t} @hypot{f}({t} %a, {t} %b)
"""),
    "carg": (1, "real", """
  %r = call {t} @atan2{f}({t} %b, {t} %a)
"""),
    "clog": (1, "complex", """
  %m = call {t} @hypot{f}({t} %a, {t} %b)
  %re = call {t} @log{f}({t} %m)
  %im = call {t} @atan2{f}({t} %b, {t} %a)
"""),
    "csqrt": (1, "complex", """
  %m = call {t} @hypot{f}({t} %a, {t} %b)
  %p = fadd {t} %m, %a
  %q = fsub {t} %m, %a
  %ph = fmul {t} %p, 5.000000e-01
  %qh = fmul {t} %q, 5.000000e-01
  %re = call {t} @llvm.sqrt.{i}({t} %ph)
  %ia = call {t} @llvm.sqrt.{i}({t} %qh)
  %im = call {t} @llvm.copysign.{i}({t} %ia, {t} %b)
"""),
    "csin": (1, "complex", """
  %si = call {t} @llvm.sin.{i}({t} %a)
  %co = call {t} @llvm.cos.{i}({t} %a)
  %ch = call {t} @cosh{f}({t} %b)
  %sh = call {t} @sinh{f}({t} %b)
  %re = fmul {t} %si, %ch
  %im = fmul {t} %co, %sh
"""),
    "ccos": (1, "complex", """
  %si = call {t} @llvm.sin.{i}({t} %a)
  %co = call {t} @llvm.cos.{i}({t} %a)
  %ch = call {t} @cosh{f}({t} %b)
  %sh = call {t} @sinh{f}({t} %b)
  %re = fmul {t} %co, %ch
  %ms = fneg {t} %si
  %im = fmul {t} %ms, %sh
"""),
    "csinh": (1, "complex", """
  %sh = call {t} @sinh{f}({t} %a)
  %ch = call {t} @cosh{f}({t} %a)
  %co = call {t} @llvm.cos.{i}({t} %b)
  %si = call {t} @llvm.sin.{i}({t} %b)
  %re = fmul {t} %sh, %co
  %im = fmul {t} %ch, %si
"""),
    "ccosh": (1, "complex", """
  %sh = call {t} @sinh{f}({t} %a)
  %ch = call {t} @cosh{f}({t} %a)
  %co = call {t} @llvm.cos.{i}({t} %b)
  %si = call {t} @llvm.sin.{i}({t} %b)
  %re = fmul {t} %ch, %co
  %im = fmul {t} %sh, %si
"""),
    # tanh(a + ib) = (sinh 2a + i sin 2b) / (cosh 2a + cos 2b), divided through by cosh 2a,
    # with sech 2a = 2e / (1 + e^2), e = exp(-|2a|): a large |a| gives +-1 + 0i and finite
    # derivatives (through cosh itself, inf / inf and 0 * inf in forward mode)
    "ctanh": (1, "complex", _TANH.format(h="%a", t="%b", th="%re", sc="%im")),
    # tan(a + ib) = (sin 2a + i sinh 2b) / (cos 2a + cosh 2b), the same way
    "ctan": (1, "complex", _TANH.format(h="%b", t="%a", th="%im", sc="%re")),
    # z^w = exp(w log z), as the library computes it
    "cpow": (2, "complex", """
  %m = call {t} @hypot{f}({t} %a, {t} %b)
  %lr = call {t} @log{f}({t} %m)
  %th = call {t} @atan2{f}({t} %b, {t} %a)
  %x1 = fmul {t} %c, %lr
  %x2 = fmul {t} %d, %th
  %x = fsub {t} %x1, %x2
  %y1 = fmul {t} %c, %th
  %y2 = fmul {t} %d, %lr
  %y = fadd {t} %y1, %y2
  %e = call {t} @llvm.exp.{i}({t} %x)
  %co = call {t} @llvm.cos.{i}({t} %y)
  %si = call {t} @llvm.sin.{i}({t} %y)
  %re = fmul {t} %e, %co
  %im = fmul {t} %e, %si
"""),
    # the projection onto the Riemann sphere: z itself, (inf, +-0) where a part is infinite
    "cproj": (1, "complex", """
  %fa = call {t} @llvm.fabs.{i}({t} %a)
  %fb = call {t} @llvm.fabs.{i}({t} %b)
  %ia = fcmp oeq {t} %fa, 0x7FF0000000000000
  %ib = fcmp oeq {t} %fb, 0x7FF0000000000000
  %inf = or i1 %ia, %ib
  %z = call {t} @llvm.copysign.{i}({t} 0.000000e+00, {t} %b)
  %re = select i1 %inf, {t} 0x7FF0000000000000, {t} %a
  %im = select i1 %inf, {t} %z, {t} %b
"""),
}

_MUL = """
  %ac = fmul {t} %a, %c
  %bd = fmul {t} %b, %d
  %ad = fmul {t} %a, %d
  %bc = fmul {t} %b, %c
  %re = fsub {t} %ac, %bd
  %im = fadd {t} %ad, %bc
"""
_DIV = """
  %cc = fmul {t} %c, %c
  %dd = fmul {t} %d, %d
  %den = fadd {t} %cc, %dd
  %ac = fmul {t} %a, %c
  %bd = fmul {t} %b, %d
  %bc = fmul {t} %b, %c
  %ad = fmul {t} %a, %d
  %ren = fadd {t} %ac, %bd
  %imn = fsub {t} %bc, %ad
  %re = fdiv {t} %ren, %den
  %im = fdiv {t} %imn, %den
"""
_CALL = re.compile(r"call (\w+) (@[\w.]+)\(([^)]*)\)")


def _helper(helper: str, t: str, nargs: int, result: str, code: str,
            scalar_args: bool = False) -> tuple[str, str]:
    """(name, IR) of a helper of type t: its parameters in the call's ABI (module docstring;
    scalar_args: four floats, as compiler-rt's float multiply takes), the code, the result,
    and the declarations of what the code calls."""
    names = ("%a", "%b", "%c", "%d")[:2 * nargs]
    body = code.format(t=t, i="f64" if t == "double" else "f32", f="" if t == "double" else "f")
    if t == "double" or scalar_args:
        params, unpack = ", ".join(f"{t} {n}" for n in names), ""
    else:
        params = ", ".join(f"<2 x float> %z{k}" for k in range(nargs))
        unpack = "".join(f"  {names[2 * k + j]} = extractelement <2 x float> %z{k}, i32 {j}\n"
                         for k in range(nargs) for j in range(2))
    if result == "real":
        ret, build = t, "  ret {t} %r\n".format(t=t)
    elif t == "float":
        ret = "<2 x float>"
        build = ("  %r0 = insertelement <2 x float> poison, float %re, i32 0\n"
                 "  %r1 = insertelement <2 x float> %r0, float %im, i32 1\n"
                 "  ret <2 x float> %r1\n")
    else:
        ret = "{ double, double }"
        build = ("  %r0 = insertvalue { double, double } poison, double %re, 0\n"
                 "  %r1 = insertvalue { double, double } %r0, double %im, 1\n"
                 "  ret { double, double } %r1\n")
    decls = {}
    for rty, callee, args in _CALL.findall(body):
        types = ", ".join(a.strip().split(" ")[0] for a in args.split(","))
        decls[callee] = f"declare {rty} {callee}({types})"
    return helper, (f"\ndefine internal {ret} {helper}({params}) {{\nentry:\n{unpack}"
                    f"{body.strip(chr(10))}\n{build}}}\n" + "\n".join(decls.values()) + "\n")


COMPLEX = {
    "@__muldc3": _helper("@__enzyme_cc_muldc3", "double", 2, "complex", _MUL),
    "@__divdc3": _helper("@__enzyme_cc_divdc3", "double", 2, "complex", _DIV),
    "@__mulsc3": _helper("@__enzyme_cc_mulsc3", "float", 2, "complex", _MUL, scalar_args=True),
    "@__divsc3": _helper("@__enzyme_cc_divsc3", "float", 2, "complex", _DIV, scalar_args=True),
}
for _name, (_n, _kind, _code) in _FORMULAS.items():
    COMPLEX[f"@{_name}"] = _helper(f"@__enzyme_cc_{_name}", "double", _n, _kind, _code)
    COMPLEX[f"@{_name}f"] = _helper(f"@__enzyme_cc_{_name}f", "float", _n, _kind, _code)


_DECLARED = re.compile(r"\ndeclare [^@\n]*(@[-\w.$]+)\(")


def with_complex_helpers(text: str) -> str:
    """Append the differentiable complex helpers for the runtime calls the module declares."""
    extra = []
    # one scan for the declared names (a MULTILINE "^" pattern per helper scanned the whole
    # module once each: 0.1 s on a large program)
    declared = {m.group(1) for m in _DECLARED.finditer("\n" + text)}
    for name, (helper, body) in COMPLEX.items():
        if name in declared and f"{helper}(" not in text:
            seen = text + "\n".join(extra)        # declare each function once
            for line in body.strip().split("\n"):
                if line.startswith("declare ") and line.split("(")[0].split()[-1] + "(" in seen:
                    body = body.replace(line + "\n", "")
            extra.append(body)
    return text + "\n" + "\n".join(extra) if extra else text
