"""Every derivative rule of stdlib_rules/*.toml, checked numerically. GENERATED from the rule files:
a new rule is covered without touching this file (add points below only when the default ones are
outside its domain).

For each rule file and precision (double; float, the `f` variant) one C program is generated that
differentiates every rule's function at several points, in each form the function reaches the AD
core in:

  lib      the libm call as written in C (`sin(x)`, `sinf(x)`; clang's default -fmath-errno)
  noerrno  the same C compiled with -ffast-math (at -O2) or -fno-math-errno (at -O0): clang
           emits the rule's LLVM intrinsic (only functions it does that for get this form)
  intr     the LLVM intrinsic called directly (`llvm.sin.f64`), from a generated .ll file

with __enzyme_autodiff (each active argument alone, the others enzyme_const; and all at once) and
__enzyme_fwddiff (a unit tangent per argument), and compares with central finite differences
(Richardson-extrapolated, in double, of the double function at the same point). Integer
arguments (ldexp's n, powi's n) are constant; pointer arguments (frexp's exponent) point to a
local. A partial written "0" must come out exactly 0. The pre-AD IR (before-ad.ll) is read back
to check that each test function really calls the form it claims to.

Each program is built once at -O2 and once at -O0 (the builds run in parallel); each test then
checks the lines of one (function, form).
"""
import os
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor

import pytest
import tomli

from conftest import ROOT

RULE_DIR = os.path.join(ROOT, "stdlib_rules")
CLANG = "clang-22"

# Points (one tuple of argument values each) where a rule's default points fall outside its
# domain or near a kink. Integer arguments are given as integers.
DEFAULT_POINTS = {1: [(-1.7,), (0.3,), (0.7,), (2.2,)],
                  2: [(0.7, 1.3), (1.9, 0.6), (2.5, -3.2), (-5.3, 1.7)],
                  3: [(0.7, 1.3, -0.4), (-1.9, 0.6, 2.5)]}
_POSITIVE = [(0.3,), (0.7,), (2.2,), (5.5,)]
POINTS = {
    "asin": [(-0.6,), (0.2,), (0.7,)], "acos": [(-0.6,), (0.2,), (0.7,)],
    "atanh": [(-0.6,), (0.2,), (0.7,)], "acosh": [(1.3,), (2.5,), (4.0,)],
    "log": _POSITIVE, "log2": _POSITIVE, "log10": _POSITIVE, "sqrt": _POSITIVE,
    "y0": _POSITIVE, "y1": _POSITIVE, "log1p": [(-0.6,), (0.3,), (2.2,)],
    "tgamma": [(-1.7,), (0.3,), (2.2,), (4.6,)], "lgamma": [(-1.7,), (0.3,), (2.2,), (4.6,)],
    "pow": [(0.7, 1.3), (1.9, 0.6), (2.5, -3.2), (1.3, 0.0)],
    "ldexp": [(0.7, 3), (-1.5, -2), (0.0, 4)], "scalbn": [(0.7, 3), (-1.5, -2), (0.0, 4)],
    "scalbln": [(0.7, 3), (-1.5, -2), (0.0, 4)],
    "jn": [(2, 3.3), (0, 0.7), (-3, 2.4), (5, 6.1)], "yn": [(2, 3.3), (0, 0.7), (-3, 2.4), (5, 6.1)],
    "powi": [(1.7, 3), (0.6, -2), (-1.3, 5), (2.2, 1), (0.9, 0)],
    "frexp": [(-1.7,), (0.3,), (0.7,), (2.2,), (5.5,)],
}
# relative tolerance; the absolute floor is TOL * 1e-3
TOL = {"double": 1e-8, "float": 2e-5}
OPT_LEVELS = ("-O2", "-O0")
# how the noerrno forms are compiled: -ffast-math implies -fno-math-errno (and adds fast flags)
NOERRNO_FLAG = {"-O2": "-ffast-math", "-O0": "-fno-math-errno"}
PRECISIONS = ("double", "float")
IR_TY = {"double": "double", "float": "float"}
SUFFIX = {"double": "f64", "float": "f32"}


def rule_files():
    out = {}
    for f in sorted(os.listdir(RULE_DIR)):
        # (fortran.toml's rules are flang runtime entries, called from Fortran by
        # test_libraries.py's fortran_intrinsics.f90)
        if f.endswith(".toml") and f != "fortran.toml":
            with open(os.path.join(RULE_DIR, f), "rb") as fh:
                rules = {k: v for k, v in tomli.load(fh).items() if k not in ("inactive", "mirror")}
            if rules:
                out[f] = rules
    return out


_TYPE_WORDS = {"double", "float", "int", "long", "short", "unsigned", "signed", "char", "const",
               "*"}


def prototypes(text):
    """name -> (return type, [parameter types]) for the double/float functions C text declares
    or defines (preprocessed math.h, or a user's source)."""
    protos = {}
    for ret, name, params in re.findall(r"^\s*(?:extern )?(double|float) (\w+) ?\(([^)]*)\)", text,
                                        re.M):
        types = []
        for p in params.split(","):
            toks = p.replace("*", " * ").split()
            if len(toks) > 1 and toks[-1] not in _TYPE_WORDS:
                toks = toks[:-1]                                   # the parameter's name
            types.append(" ".join(t for t in toks if t != "const").replace(" *", " *"))
        protos.setdefault(name, (ret, types))
    return protos


def _math_h():
    src = "#define _GNU_SOURCE\n#include <math.h>\n"
    text = subprocess.run([CLANG, "-E", "-x", "c", "-"], input=src, capture_output=True,
                          text=True, check=True).stdout
    return prototypes(text.replace("; extern", ";\nextern"))


def _called(ir, prefix):
    """{function name: names it calls} for the functions of LLVM IR text whose name starts
    with prefix."""
    return {fn: set(re.findall(r"call [^@\n]*@([\w.$]+)\(", body)) for fn, body in
            re.findall(r"^define [^\n]*@(" + prefix + r"\w+)\((.*?)^}", ir, re.S | re.M)}


def _noerrno_intrinsics(protos):
    """Names whose libm call clang-22 itself turns into the rule's intrinsic under
    -fno-math-errno (sin -> llvm.sin; not ldexp or exp10, which stay calls)."""
    names = {n: s["intrinsic"] for rules in RULE_FILES.values() for n, s in rules.items()
             if "intrinsic" in s and n in protos}
    src = ["#define _GNU_SOURCE", "#include <math.h>"]
    for n in names:
        k = range(len(protos[n][1]))
        params = ", ".join(f"{t} a{i}" for i, t in zip(k, protos[n][1]))
        src.append(f"double p_{n}({params}) {{ return {n}({', '.join(f'a{i}' for i in k)}); }}")
    ir = subprocess.run([CLANG, "-O0", "-fno-math-errno", "-S", "-emit-llvm", "-x", "c", "-",
                         "-o", "-"], input="\n".join(src) + "\n", capture_output=True, text=True,
                        check=True).stdout
    called = _called(ir, "p_")
    return {n for n, intr in names.items()
            if any(c.startswith(intr + ".") for c in called.get("p_" + n, ()))}


RULE_FILES = rule_files()
PROTOS = _math_h()
NOERRNO = _noerrno_intrinsics(PROTOS)


class Case:
    """One rule in one form at one precision: the generated test function and its reference."""

    def __init__(self, fname, name, spec, form, prec, protos=None):
        protos = PROTOS if protos is None else protos
        self.file, self.name, self.spec, self.form, self.prec = fname, name, spec, form, prec
        self.id = f"{form}_{name}"
        self.fn = f"t_{self.id}"
        self.partials = [p.strip() for p in spec["partials"]]
        if form == "intr":
            self.ctypes = ["int" if p == "inactive" else prec for p in self.partials]
        else:
            self.ctypes = protos[name][1]
        self.cname = name if prec == "double" else name + "f"
        self.refname = name                # the double function finite differences run on
        if self.ctypes[0] == "float":      # a float-only rule: lgammaf_r (double: lgamma_r)
            self.cname, self.refname = name, name.replace("f_", "_", 1)
        # kinds: "f" active float, "i" integer constant, "p" pointer to a local
        self.kinds = ["p" if "*" in t else "f" if t in ("double", "float") else "i"
                      for t in self.ctypes]
        self.active = [k for k, kind in enumerate(self.kinds) if kind == "f"]
        self.points = POINTS.get(name) or DEFAULT_POINTS[sum(1 for k in self.kinds if k != "p")]

    @property
    def intrinsic(self):
        base = self.spec["intrinsic"]
        ints = ".i32" if "i" in self.kinds else ""
        return base, ints

    def params(self, prec=None):
        prec = prec or self.prec
        return [(k, prec if kind == "f" else t) for k, (kind, t) in
                enumerate(zip(self.kinds, self.ctypes)) if kind != "p"]

    def c_function(self, name, prec, callee):
        """`static T t_lib_sin(T a0) { return sinf(a0); }` (pointer arguments: locals)."""
        params = ", ".join(f"{t} a{k}" for k, t in self.params(prec))
        locals_ = "".join(f"{t.replace('*', '').strip()} a{k}; " for k, (kind, t) in
                          enumerate(zip(self.kinds, self.ctypes)) if kind == "p")
        args = ", ".join(f"&a{k}" if kind == "p" else f"a{k}" for k, kind in enumerate(self.kinds))
        return f"{prec} {name}({params}) {{ {locals_}return {callee}({args}); }}\n"

    def ll_function(self, name, prec):
        base, ints = self.intrinsic
        ty = IR_TY[prec]
        params = ", ".join(f"{ty} %a{k}" if kind == "f" else f"i32 %a{k}"
                           for k, kind in enumerate(self.kinds))
        callee = f"{base}.{SUFFIX[prec]}{ints}"
        types = ", ".join(p.split()[0] for p in params.split(", "))
        return (f"define {ty} @{name}({params}) {{\n  %r = call {ty} @{callee}({params})\n"
                f"  ret {ty} %r\n}}\n", f"declare {ty} @{callee}({types})")


def cases_for(fname, prec, rules=None, protos=None):
    """The cases of one rule file (or of `rules`, functions declared in `protos`)."""
    rules = RULE_FILES[fname] if rules is None else rules
    protos = PROTOS if protos is None else protos
    out = []
    for name, spec in rules.items():
        variant_ok = prec == "double" or spec.get("float_variant", True)
        lib = name in protos and (prec == "double" or name + "f" in protos) and variant_ok
        if name in protos and protos[name][0] == "float":      # lgammaf_r: float only
            lib = prec == "float"
        if lib:
            out.append(Case(fname, name, spec, "lib", prec, protos))
            if name in NOERRNO and protos is PROTOS:
                out.append(Case(fname, name, spec, "noerrno", prec, protos))
        # (x86's packed approximations have vector forms only: test_libraries' Eigen float sqrt)
        if "intrinsic" in spec and not spec["intrinsic"].startswith("llvm.x86."):
            out.append(Case(fname, name, spec, "intr", prec, protos))
    return out


def untestable():
    """Rules with neither a math.h prototype nor an intrinsic: this generator cannot call them."""
    return [(f, n) for f, rules in RULE_FILES.items() for n, spec in rules.items()
            if n not in PROTOS and "intrinsic" not in spec]


def generate(cases, prec, prelude="#include <math.h>"):
    """(main.c, noerrno.c, intr.ll) checking `cases` in one precision."""
    T = prec
    main = ["#define _GNU_SOURCE", "#include <math.h>", prelude, "#include <stdio.h>",
            "#include <string.h>", "extern int enzyme_const;",
            "double __enzyme_autodiff(void *, ...);", "double __enzyme_fwddiff(void *, ...);",
            """
__attribute__((noinline)) static double fd(double (*ev)(const double *), const double *a,
                                           int n, int k) {
  /* central differences, Richardson-extrapolated: O(h^4) */
  double b[8], h = 2e-4 * (fabs(a[k]) > 1 ? fabs(a[k]) : 1), fp, fm, d1, d2;
  memcpy(b, a, n * sizeof *a);
  b[k] = a[k] + h; fp = ev(b); b[k] = a[k] - h; fm = ev(b); d1 = (fp - fm) / (2 * h);
  b[k] = a[k] + h / 2; fp = ev(b); b[k] = a[k] - h / 2; fm = ev(b); d2 = (fp - fm) / h;
  return (4 * d2 - d1) / 3;
}
__attribute__((noinline)) static void out(const char *id, const char *mode, int k, double got,
                                          double want, const double *a, int n) {
  printf("%s %s %d %.17g %.17g", id, mode, k, got, want);
  for (int i = 0; i < n; i++) printf(" %.17g", a[i]);
  printf("\\n");
}
"""]
    noerrno = ["#define _GNU_SOURCE", "#include <math.h>"]
    ll = ['target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-'
          'n8:16:32:64-S128"', 'target triple = "x86_64-pc-linux-gnu"']
    runs = []
    for c in cases:
        n = len(c.params())
        # the function differentiated, and the double reference the differences are taken of
        if c.form == "lib":
            main.append("static " + c.c_function(c.fn, T, c.cname))
            main.append("static " + c.c_function("ref_" + c.id, "double", c.refname))
        elif c.form == "noerrno":
            noerrno.append(c.c_function(c.fn, T, c.cname))
            main.append(f"{T} {c.fn}({', '.join(t for _, t in c.params())});")
            main.append("static " + c.c_function("ref_" + c.id, "double", c.refname))
        else:
            for fn, p in ((c.fn, T), ("ref_" + c.id, "double")):
                define, declare = c.ll_function(fn, p)
                ll.append(define)
                if declare not in ll:
                    ll.append(declare)
            main.append(f"{T} {c.fn}({', '.join(t for _, t in c.params())});")
            main.append(f"double ref_{c.id}({', '.join(t for _, t in c.params('double'))});")
        call_args = ", ".join(f"({t})a[{k}]" for k, (_, t) in enumerate(c.params("double")))
        main.append(f"static double ev_{c.id}(const double *a) "
                    f"{{ return ref_{c.id}({call_args}); }}")
        params = c.params()
        pts = ", ".join("{" + ", ".join(repr(float(v)) for v in pt) + "}" for pt in c.points)
        fn = [f"static void run_{c.id}(void) {{",
              f"  static volatile double P[][{n}] = {{{pts}}};",
              f"  static volatile int np = {len(c.points)};",
              "  for (int j = 0; j < np; j++) {"]
        for pos, (k, t) in enumerate(params):
            fn.append(f"    {t} x{k} = ({t})P[j][{pos}];")
        fn.append(f"    double a[] = {{{', '.join(f'(double)x{k}' for k, _ in params)}}};")
        for pos, (k, t) in enumerate(params):
            if c.kinds[k] != "f":
                continue
            # reverse mode, argument k active, the other float arguments constant
            types, args = ["void *"], [f"(void *){c.fn}"]
            for k2, t2 in params:
                if c.kinds[k2] == "f" and k2 != k:
                    types.append("int"), args.append("enzyme_const")
                types.append(t2), args.append(f"x{k2}")
            fn.append(f"    out(\"{c.id}\", \"rev\", {k}, (({T} (*)({', '.join(types)}))"
                      f"__enzyme_autodiff)({', '.join(args)}), fd(ev_{c.id}, a, {n}, {pos}),"
                      f" a, {n});")
            # forward mode, unit tangent in argument k
            types, args = ["void *"], [f"(void *){c.fn}"]
            for k2, t2 in params:
                types.append(t2), args.append(f"x{k2}")
                if c.kinds[k2] == "f":
                    types.append(t2), args.append("1" if k2 == k else "0")
            fn.append(f"    out(\"{c.id}\", \"fwd\", {k}, (({T} (*)({', '.join(types)}))"
                      f"__enzyme_fwddiff)({', '.join(args)}), fd(ev_{c.id}, a, {n}, {pos}),"
                      f" a, {n});")
        if len(c.active) > 1:
            # reverse mode, all float arguments active: a struct of the derivatives
            m = len(c.active)
            types = ", ".join(["void *"] + [t for _, t in params])
            args = ", ".join([f"(void *){c.fn}"] + [f"x{k}" for k, _ in params])
            fn.append(f"    struct {{ {T} d[{m}]; }} g = ((__typeof__(g) (*)({types}))"
                      f"__enzyme_autodiff)({args});")
            for i, k in enumerate(c.active):
                pos = [kk for kk, _ in params].index(k)
                fn.append(f"    out(\"{c.id}\", \"revall\", {k}, g.d[{i}], "
                          f"fd(ev_{c.id}, a, {n}, {pos}), a, {n});")
        fn += ["  }", "}"]
        main += fn
        runs.append(f"run_{c.id}")
    # called through volatile pointers: each run_ stays a function of its own (a small caller
    # per marker call keeps the AD core's per-call analysis cheap)
    main += [f"static void (*volatile runs[])(void) = {{{', '.join(runs)}}};",
             "int main(void) {",
             "  for (unsigned i = 0; i < sizeof runs / sizeof *runs; i++) runs[i]();",
             "  return 0;", "}"]
    return "\n".join(main) + "\n", "\n".join(noerrno) + "\n", "\n".join(ll) + "\n"


def build_and_run(cases, prec, opt, d, prelude="#include <math.h>", inputs=(), env=None):
    """Generates the checks of `cases` into directory d, builds them with enzyme-cc at `opt`
    (with the extra link `inputs`), runs them: {"rows": {case id: [(mode, k, got, expected,
    point)]}, "callees": {test function: names it calls before AD}} or {"error": text}."""
    main_c, noerrno_c, intr_ll = generate(cases, prec, prelude)
    os.makedirs(d, exist_ok=True)
    for name, text in (("main.c", main_c), ("noerrno.c", noerrno_c), ("intr.ll", intr_ll)):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
    env = dict(env or os.environ, ENZYME_CC_DUMP_DIR=d)
    steps = [["enzyme-cc", opt, NOERRNO_FLAG[opt], "-c", "noerrno.c", "-o", "noerrno.o"],
             ["enzyme-cc", opt, "main.c", "noerrno.o", "intr.ll", *inputs, "-lm", "-o", "prog"],
             ["./prog"]]
    for cmd in steps:
        r = subprocess.run(cmd, cwd=d, capture_output=True, text=True, env=env)
        if r.returncode != 0:
            return {"error": f"{' '.join(cmd)} in {d} failed ({r.returncode}):\n"
                             f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}"}
    rows = {}
    for line in r.stdout.splitlines():
        f = line.split()
        rows.setdefault(f[0], []).append((f[1], int(f[2]), float(f[3]), float(f[4]),
                                          [float(v) for v in f[5:]]))
    with open(os.path.join(d, "before-ad.ll")) as fh:
        ir = fh.read()
    return {"rows": rows, "callees": _called(ir, "t_"), "dir": d}


def check_case(res, case, prec, opt):
    """Asserts on one case's lines of a build_and_run result."""
    assert "error" not in res, res["error"]
    # the function reached the AD core in the form this case claims
    called = res["callees"].get(case.fn)
    assert called is not None, f"{case.fn} not found in {res['dir']}/before-ad.ll"
    intr = case.spec.get("intrinsic")
    is_intr = intr is not None and any(c.startswith(intr + ".") for c in called)
    if case.form in ("intr", "noerrno"):
        assert is_intr, f"{case.fn} calls {sorted(called)}, not {intr}"
    else:
        assert case.cname in called or is_intr, \
            f"{case.fn} calls {sorted(called)}, neither {case.cname} nor {intr}"
    rows = res["rows"].get(case.id, [])
    modes = {"rev", "fwd"} | ({"revall"} if len(case.active) > 1 else set())
    want = len(case.points) * len(case.active) * len(modes)
    assert len(rows) == want, f"{len(rows)} result lines for {case.id}, expected {want}"
    tol = TOL[prec]
    bad = []
    for mode, k, got, exp, pt in rows:
        partial = case.partials[k]
        if partial == "0":
            ok = got == 0.0
        else:
            ok = abs(got - exp) <= tol * max(abs(exp), 1e-3)
        if not ok:
            bad.append(f"  {mode} d/d{case.spec['args'][k]} at {pt}: got {got!r}, "
                       f"expected {'exactly 0' if partial == '0' else repr(exp)}")
    assert not bad, f"{case.name} ({case.form}, {prec}, {opt}):\n" + "\n".join(bad)


BUILDS = [(f, p, o) for f in RULE_FILES for p in PRECISIONS for o in OPT_LEVELS]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("rules"))
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as ex:
        futs = {(f, p, o): ex.submit(build_and_run, cases_for(f, p), p, o,
                                     os.path.join(tmp, f"{f}-{p}{o}"))
                for f, p, o in BUILDS}
        return {b: fut.result() for b, fut in futs.items()}


def _params():
    out = []
    for fname in RULE_FILES:
        for prec in PRECISIONS:
            for c in cases_for(fname, prec):
                for opt in OPT_LEVELS:
                    out.append(pytest.param(fname, prec, opt, c,
                                            id=f"{fname[:-5]}-{prec}{opt}-{c.id}"))
    return out


@pytest.mark.parametrize("fname,prec,opt,case", _params())
def test_rule(results, fname, prec, opt, case):
    check_case(results[(fname, prec, opt)], case, prec, opt)


def test_every_rule_is_exercised():
    """A rule this generator cannot call (no math.h prototype, no intrinsic) needs a test of its
    own; list it here when it has one."""
    assert untestable() == []


def _inactive_math():
    """(name, C return type, parameter count) for the names of the stdlib's [inactive] lists that
    math.h declares with float parameters only (ilogb, lround, isnan, ...)."""
    names = set()
    for f in sorted(os.listdir(RULE_DIR)):
        if f.endswith(".toml"):
            with open(os.path.join(RULE_DIR, f), "rb") as fh:
                names |= set(tomli.load(fh).get("inactive", {}).get("names", []))
    src = "#define _GNU_SOURCE\n#include <math.h>\n"
    text = subprocess.run([CLANG, "-E", "-x", "c", "-"], input=src, capture_output=True,
                          text=True, check=True).stdout.replace("; extern", ";\nextern")
    out = []
    for ret, name, params in re.findall(r"^\s*extern ((?:long )*int) (\w+) \(([^)]*)\)", text,
                                        re.M):
        types = [p.split()[0] for p in params.split(",")]
        if name in names and types and all(t in ("double", "float") for t in types):
            out.append((name, types[0], len(types)))
    return sorted(set(out))


def test_inactive_math_functions(tmp_path):
    """A call to an inactive math function contributes nothing: d/dx [x * g(x)] = g(x), in
    reverse and forward mode (g called as a function, not as clang's builtin)."""
    fns = _inactive_math()
    assert {"ilogb", "lround", "llrint", "isnan"} <= {n for n, _, _ in fns}
    src = ["#define _GNU_SOURCE", "#include <math.h>", "#include <stdio.h>",
           "double __enzyme_autodiff(void *, ...);", "double __enzyme_fwddiff(void *, ...);"]
    calls = []
    for name, ty, n in fns:
        args = ", ".join(["(" + ty + ")x"] * n)
        src.append(f"static double f_{name}(double x) {{ return x * (double)({name})({args}); }}")
        for mode, extra in (("rev", ""), ("fwd", ", 1.0")):
            marker = "__enzyme_autodiff" if mode == "rev" else "__enzyme_fwddiff"
            calls.append(f'  printf("{name} {mode} %.17g %.17g\\n", {marker}((void *)f_{name}, '
                         f'x{extra}), (double)({name})({args}));')
    src += ["int main(void) {", "  volatile double v = 2.7; double x = v;", *calls, "}"]
    (tmp_path / "inactive.c").write_text("\n".join(src) + "\n")
    subprocess.run(["enzyme-cc", "-O2", "inactive.c", "-lm", "-o", "inactive"], cwd=tmp_path,
                   check=True, capture_output=True)
    out = subprocess.run(["./inactive"], cwd=tmp_path, check=True, capture_output=True,
                         text=True).stdout.split("\n")
    bad = [line for line in out if line and line.split()[2] != line.split()[3]]
    assert len([line for line in out if line]) == 2 * len(fns)
    assert not bad
