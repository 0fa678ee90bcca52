"""Objects AD cannot reach keep their compiled code at a marker link (lto/link.py
_native_modules): only objects that define something AD may reach (or name a global it reaches,
or a function calling an Enzyme entry point), or hold an enzyme name or attribute, are merged,
differentiated and compiled again. Gradients
must not change, and the AD cache must remember which objects stayed native."""
import math
import os
import re

import pytest

from conftest import run

KERNEL = r"""
#include <math.h>
double scale = 2.0;                          /* a global AD reads */
static double sq(double t) { return t * t; }
double f(double *x) { return scale * sin(x[0]) * sq(x[1]); }
"""
# only calls f: linked as compiled (the AD module keeps f for it)
CALLER = "double f(double *x);\ndouble twice(double *x) { return 2 * f(x); }\n"
# unrelated to AD: linked as compiled
UNRELATED = r"""
static double table[4] = {1, 2, 3, 4};
double unrelated(int n) { double s = 0; for (int i = 0; i < n; i++) s += table[i & 3] * i;
  return s; }
"""
# unrelated too, but with an enzyme attribute on a declaration: kept
ANNOTATED = r"""
double other(double) __attribute__((enzyme_inactive));
double annotated(double t) { return other(t) + 1; }
double other(double t) { return t * 3; }
"""
MAIN = r"""
#include <math.h>
#include <stdio.h>
extern double __enzyme_autodiff(void *, ...);
extern int enzyme_dup;
double f(double *x); double twice(double *x); double unrelated(int); double slow(int);
double annotated(double);
int main(void) {
  double x[2] = {0.7, 1.3}, dx[2] = {0, 0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx);
  double d0 = 2 * cos(0.7) * 1.3 * 1.3, d1 = 2 * sin(0.7) * 2 * 1.3;
  printf("%.12f %.12f %g %g %g %g\n", dx[0], dx[1], twice(x), unrelated(9), slow(5),
         annotated(1));
  return fabs(dx[0] - d0) > 1e-12 || fabs(dx[1] - d1) > 1e-12;
}
"""
SLOW = "double slow(int n) { double s = 0; for (int i = 0; i < n; i++) s += i; return s; }\n"


def _build(tmp_path):
    files = {"kernel": KERNEL, "caller": CALLER, "unrelated": UNRELATED, "annotated": ANNOTATED,
             "main": MAIN, "slow": SLOW}
    for name, text in files.items():
        (tmp_path / f"{name}.c").write_text(text)
        opt = "-O0" if name == "slow" else "-O2"     # (an -O0 object keeps its -O0 code)
        run(["enzyme-cc", opt, "-c", f"{name}.c", "-o", f"{name}.o"], cwd=tmp_path)
    return [f"{name}.o" for name in files]


def _link(tmp_path, objs, env, exe, driver="enzyme-cc"):
    r = run([driver, "-O2", "-v", *objs, "-lm", "-o", exe], cwd=tmp_path, env=env)
    relink = [ln for ln in r.stderr.splitlines() if ln.startswith("enzyme-cc: ") and "-o" in ln]
    out = run([f"./{exe}"], cwd=tmp_path).stdout.split()
    return set(re.findall(r"([-\w]+)\.o\b", relink[-1])), out


def test_unreached_objects_keep_their_code(tmp_path):
    objs = _build(tmp_path)
    dump = tmp_path / "dump"
    env = dict(os.environ, ENZYME_CC_CACHE="0", ENZYME_CC_DUMP_DIR=str(dump))
    linked, out = _link(tmp_path, objs, env, "p")
    assert linked == {"enzyme-ad", "unrelated", "slow", "caller"}
    assert out[2:] == ["4.35491", "88", "10", "4"], out
    before = (dump / "before-ad.ll").read_text()
    assert re.search(r"^define [^\n]*@f\(", before, re.M)
    assert re.search(r"^define [^\n]*@annotated\(", before, re.M)     # enzyme attribute
    assert not re.search(r"^define [^\n]*@unrelated\(", before, re.M)
    assert "@table" not in before


def test_ad_cache_remembers_native_objects(tmp_path):
    objs = _build(tmp_path)
    env = dict(os.environ, ENZYME_CC_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("ENZYME_CC_CACHE", None)
    first = _link(tmp_path, objs, env, "p1")
    assert list((tmp_path / "cache" / "link").glob("ad-*.native"))
    second = _link(tmp_path, objs, env, "p2")          # a cache hit
    assert first == second and first[0] == {"enzyme-ad", "unrelated", "slow", "caller"}


CXX = {
    "kernel.cpp": "#include <vector>\ndouble f(const double *x, int n) {\n"
                  "  std::vector<double> v(x, x + n); double s = 0;\n"
                  "  for (double t : v) s += t * t * t; return s; }\n",
    # shares inline functions with kernel.cpp (std::min<unsigned long>, linkonce_odr: its own
    # copies) and has static constructors: linked as compiled
    "util.cpp": "#include <string>\n#include <vector>\nstatic std::string name = \"abc\";\n"
                "struct Counter { int n = 7; Counter() { n += 5; } } counter;\n"
                "int unrelated_len(int k) { std::string s = name;\n"
                "  for (int i = 0; i < k; i++) s += 'x'; std::vector<int> v(k, 1);\n"
                "  return (int)s.size() + counter.n + (int)v.size(); }\n",
    "main.cpp": "#include <cstdio>\n#include <cmath>\ndouble f(const double *x, int n);\n"
                "int unrelated_len(int k);\nextern \"C\" void __enzyme_autodiff(void *, ...);\n"
                "extern int enzyme_dup, enzyme_const;\nint main() {\n"
                "  double x[3] = {1, 2, 3}, dx[3] = {0, 0, 0};\n"
                "  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, 3);\n"
                "  std::printf(\"%g %g %g %d\\n\", dx[0], dx[1], dx[2], unrelated_len(4));\n"
                "  return std::fabs(dx[2] - 27) > 1e-12; }\n",
}


def test_cxx_inline_functions_and_constructors(tmp_path):
    for name, text in CXX.items():
        (tmp_path / name).write_text(text)
        run(["enzyme-c++", "-O2", "-c", name, "-o", name[:-4] + ".o"], cwd=tmp_path)
    env = dict(os.environ, ENZYME_CC_CACHE="0")
    for order in (["kernel.o", "util.o", "main.o"], ["util.o", "main.o", "kernel.o"]):
        linked, out = _link(tmp_path, order, env, "p", "enzyme-c++")
        assert linked == {"enzyme-ad", "util"} and out == ["3", "12", "27", "23"], (linked, out)


# A static function whose address another object's code hands to the differentiated function:
# AD dispatches the indirect call over every address-taken function, so its object stays.
CALLBACK = {
    "cb.c": "static double h(double t) { return t * t * t; }\n"
            "typedef double (*fn)(double);\nfn get_h(void) { return h; }\n",
    "f.c": "typedef double (*fn)(double);\n"
           "double f(double x, fn g) { return g(x) * 2; }\n",
    "main.c": "#include <stdio.h>\ntypedef double (*fn)(double);\nfn get_h(void);\n"
              "double f(double x, fn g);\nextern double __enzyme_autodiff(void *, ...);\n"
              "extern int enzyme_const;\nint main(void) {\n"
              "  double d = __enzyme_autodiff((void *)f, 1.5, enzyme_const, get_h());\n"
              "  printf(\"%g\\n\", d); return d != 13.5; }\n",
}


def test_address_taken_local_function_stays(tmp_path):
    for name, text in CALLBACK.items():
        (tmp_path / name).write_text(text)
        run(["enzyme-cc", "-O2", "-c", name, "-o", name[:-2] + ".o"], cwd=tmp_path)
    linked, out = _link(tmp_path, ["cb.o", "f.o", "main.o"], dict(os.environ, ENZYME_CC_CACHE="0"),
                        "p")
    assert linked == {"enzyme-ad"} and out == ["13.5"], (linked, out)


def test_address_taken_inline_function_stays(tmp_path):
    """The same with an inline function (linkonce_odr) no other object defines."""
    files = {"cb.cpp": "template <class T> T cube(T t) { return t * t * t; }\n"
                       "typedef double (*fn)(double);\nfn get_h() { return cube<double>; }\n",
             "f.cpp": CALLBACK["f.c"], "main.cpp": CALLBACK["main.c"].replace(
                 "extern double __enzyme", "extern \"C\" double __enzyme")}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        run(["enzyme-c++", "-O2", "-c", name, "-o", name[:-4] + ".o"], cwd=tmp_path)
    linked, out = _link(tmp_path, ["cb.o", "f.o", "main.o"], dict(os.environ, ENZYME_CC_CACHE="0"),
                        "p", "enzyme-c++")
    assert linked == {"enzyme-ad"} and out == ["13.5"], (linked, out)


def test_archive_members(tmp_path):
    """Members of a static library: the unreached one is pulled from the archive as compiled."""
    objs = _build(tmp_path)
    run(["ar", "rcs", "libparts.a", *(o for o in objs if o != "main.o")], cwd=tmp_path)
    dump = tmp_path / "dump"
    env = dict(os.environ, ENZYME_CC_CACHE="0", ENZYME_CC_DUMP_DIR=str(dump))
    linked, out = _link(tmp_path, ["main.o", "-L.", "-lparts"], env, "p")
    assert linked == {"enzyme-ad"} and out[2:] == ["4.35491", "88", "10", "4"], (linked, out)
    before = (dump / "before-ad.ll").read_text()
    assert re.search(r"^define [^\n]*@f\(", before, re.M)
    for name in ("twice", "unrelated"):      # (twice only calls f)
        assert not re.search(rf"^define [^\n]*@{name}\(", before, re.M)


def test_only_archive_bitcode_left(tmp_path):
    """The marker's object is an archive member and the command line's one object is left
    native: the AD object goes before the first input, here `-l` (before the object that needs
    it: lld's archive rule, which reads archives in any order)."""
    files = {"x.c": "double app(double);\nint main(void) { return app(2.0) != 12.0; }\n",
             "app.c": "double run(double);\ndouble app(double t) { return run(t); }\n",
             "run.c": "extern double __enzyme_autodiff(void *, ...);\n"
                      "static double cube(double t) { return t * t * t; }\n"
                      "double run(double t) { return __enzyme_autodiff((void *)cube, t); }\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        run(["enzyme-cc", "-O2", "-c", name, "-o", name[:-2] + ".o"], cwd=tmp_path)
    run(["ar", "rcs", "libparts.a", "app.o", "run.o"], cwd=tmp_path)
    linked, _ = _link(tmp_path, ["-fuse-ld=lld", "-L.", "-lparts", "x.o"],
                      dict(os.environ, ENZYME_CC_CACHE="0"), "p")
    assert linked == {"enzyme-ad", "x"}, linked


ORDER = {"main.c": "#include <stdio.h>\ndouble f(double);\n"
                  "double __enzyme_autodiff(void *, ...);\nint main(void) {\n"
                  "  printf(\"%g %g\\n\", f(2), __enzyme_autodiff((void *)f, 2.0));\n}\n",
         "f.c": "double g(double);\ndouble f(double x) { return g(x); }\n",
         "g1.c": "double g(double x) { return x * x; }\n",
         "g2.c": "double g(double x) { return 3 * x * x; }\n"}


@pytest.mark.parametrize("order,want", [
    (["-lg2", "-lf", "-lg1"], "4 4\n"),                    # ld: libg2 is read before f needs g
    (["-lg2", "-lf", "-lg1", "-fuse-ld=lld"], "12 12\n"),  # lld: the first archive defining g
    (["-Wl,--start-group", "-lg1", "-lf", "-Wl,--end-group"], "4 4\n")], ids=" ".join)
def test_archive_members_as_the_linker_takes_them(tmp_path, order, want):
    """Archive members are the ones the linker the link runs takes: GNU ld reads archives in
    command-line order (the differentiated program took lld's choice, another g than the
    primal's link, found by a new-user check); with lld, or inside a group, any order."""
    for name, text in ORDER.items():
        (tmp_path / name).write_text(text)
        run(["enzyme-cc", "-O2", "-c", name], cwd=tmp_path)
    for lib in ("f", "g1", "g2"):
        run(["ar", "rcs", f"lib{lib}.a", f"{lib}.o"], cwd=tmp_path)
    run(["enzyme-cc", "main.o", "-L.", *order, "-o", "p"], cwd=tmp_path)
    assert run(["./p"], cwd=tmp_path).stdout == want


def test_archive_before_its_user_is_named(tmp_path):
    """An archive listed before the code that needs it gives nothing to GNU ld: the error
    says so (as ld would report an undefined reference) instead of accepting the link."""
    for name, text in ORDER.items():
        (tmp_path / name).write_text(text)
        run(["enzyme-cc", "-O2", "-c", name], cwd=tmp_path)
    for lib in ("f", "g1"):
        run(["ar", "rcs", f"lib{lib}.a", f"{lib}.o"], cwd=tmp_path)
    r = run(["enzyme-cc", "main.o", "-L.", "-lg1", "-lf", "-o", "p"], cwd=tmp_path, check=False)
    assert r.returncode == 1 and "'g' is defined in './libg1.a', which comes before the code " \
        "that needs it" in r.stderr, r.stderr


def test_edit_of_an_unreached_object_keeps_the_ad_object(tmp_path):
    """The AD object is also cached by the modules the merge stage keeps: after an edit of an
    object AD does not reach, the relink takes the AD object from the cache; after an edit of
    one it reaches, it is built again."""
    objs = _build(tmp_path)
    env = dict(os.environ, ENZYME_CC_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("ENZYME_CC_CACHE", None)

    def relink(name, old, new):
        (tmp_path / f"{name}.c").write_text((tmp_path / f"{name}.c").read_text().replace(old, new))
        run(["enzyme-cc", "-O2", "-c", f"{name}.c", "-o", f"{name}.o"], cwd=tmp_path)
        r = run(["enzyme-cc", "-O2", "-v", *objs, "-lm", "-o", "p"], cwd=tmp_path, env=env)
        out = run(["./p"], cwd=tmp_path, check=False).stdout.split()   # (checks scale 2 itself)
        return "objects AD reaches are unchanged" in r.stderr, out

    assert _link(tmp_path, objs, env, "p")[1][2:] == ["4.35491", "88", "10", "4"]
    hit, out = relink("unrelated", "table[4] = {1, 2, 3, 4}", "table[4] = {1, 2, 3, 5}")
    assert hit and out[2:] == ["4.35491", "98", "10", "4"], out
    hit, out = relink("kernel", "scale = 2.0", "scale = 3.0")
    assert not hit and out[2:] == ["6.53237", "98", "10", "4"], out
    d0, d1 = 3 * math.cos(0.7) * 1.3 * 1.3, 3 * math.sin(0.7) * 2 * 1.3
    assert abs(float(out[0]) - d0) < 1e-9 and abs(float(out[1]) - d1) < 1e-9


MULTI_TU = {
    "pots.h": "#include <cstddef>\n#include <memory>\n#include <vector>\n"
              "struct Vec { std::vector<double> d;\n"
              "  Vec(const double *p, std::size_t n) : d(p, p + n) {} };\n"
              "struct Pot { virtual ~Pot() = default; virtual double energy(const Vec &x) const = 0; };\n"
              "struct Quart : Pot { double energy(const Vec &x) const override {\n"
              "  double s = 0; for (double v : x.d) s += v * v * v * v / 4; return s; } };\n"
              "std::vector<std::unique_ptr<Pot>> make();\n",
    "make.cpp": "#include \"pots.h\"\nstd::vector<std::unique_ptr<Pot>> make() {\n"
                "  std::vector<std::unique_ptr<Pot>> v; v.push_back(std::make_unique<Quart>());\n"
                "  return v; }\n",
    "main.cpp": "#include <cstdio>\n#include \"pots.h\"\n"
                "double total(const std::vector<std::unique_ptr<Pot>> &pots, const Vec &x) {\n"
                "  double e = 0; for (const auto &p : pots) e += p->energy(x); return e; }\n"
                "double f(const double *x, std::size_t n) { auto pots = make();\n"
                "  return total(pots, Vec(x, n)); }\n"
                "extern int enzyme_const; extern \"C\" void __enzyme_autodiff(void *, ...);\n"
                "int main() { double x[2] = {1, 2}, g[2] = {0, 0};\n"
                "  __enzyme_autodiff((void *)f, x, g, enzyme_const, (std::size_t)2);\n"
                "  std::printf(\"%g %g\\n\", g[0], g[1]); }\n",
}


CSR = {
    "csr.h": "#include <vector>\nstruct Csr { std::vector<int> col; std::vector<double> val;\n"
             "  void multiply(const std::vector<double> &x, std::vector<double> &y) const; };\n",
    "csr.cpp": "#include \"csr.h\"\n"
               "void Csr::multiply(const std::vector<double> &x, std::vector<double> &y) const {\n"
               "  y.resize(x.size());\n"
               "  for (std::size_t i = 0; i < x.size(); ++i) y[i] = val[i] * x[col[i]]; }\n",
    "main.cpp": "#include <cstdio>\n#include \"csr.h\"\n"
                "double __enzyme_autodiff(void *, ...); extern int enzyme_dup;\n"
                "double f(const double *d) { Csr A; A.col = {0, 1}; A.val = {d[0], d[1]};\n"
                "  std::vector<double> b = {1.0, 2.0}, u; A.multiply(b, u);\n"
                "  return b[0] * u[0] + b[1] * u[1]; }\n"
                "int main() { std::vector<char> flags;   // code AD never sees\n"
                "  for (int i = 0; i < 3; ++i) flags.push_back(i == 0);\n"
                "  double d[2] = {3, 4}, dd[2] = {0, 0};\n"
                "  __enzyme_autodiff((void *)f, enzyme_dup, d, dd);\n"
                "  std::printf(\"%zu %g %g\\n\", flags.size(), dd[0], dd[1]); }\n",
}


@pytest.mark.parametrize("flags", [["-O2"], ["-O0"]], ids=" ".join)
def test_numbered_types_beside_code_ad_never_sees(tmp_path, flags):
    """Numbered types, and a function AD never sees (main's vector<char>: marked optnone for the
    pre-AD pipeline, which LLVM's instnamer skips): its numbered labels were renamed as types
    (an internal error, found by a new-user check)."""
    for name, text in CSR.items():
        (tmp_path / name).write_text(text)
    env = dict(os.environ, ENZYME_CC_CACHE="0")
    for f in ("csr", "main"):
        run(["enzyme-c++", *flags, "-c", f"{f}.cpp", "-o", f"{f}.o"], cwd=tmp_path, env=env)
    run(["enzyme-c++", *flags, "main.o", "csr.o", "-o", "p"], cwd=tmp_path, env=env)
    assert run(["./p"], cwd=tmp_path).stdout.split() == ["3", "1", "4"]


@pytest.mark.parametrize("flags", [["-O2"], ["-O0"]], ids=" ".join)
def test_cxx_types_numbered_by_the_merge(tmp_path, flags):
    """Two C++ objects whose std::vector instantiations clash leave struct types that LLVM
    prints by number (`%0 = type { %1 }`) after the merge; a function's numbered values share
    those names, and the derivative once named a type as a value (invalid IR)."""
    for name, text in MULTI_TU.items():
        (tmp_path / name).write_text(text)
    env = dict(os.environ, ENZYME_CC_CACHE="0")
    run(["enzyme-c++", *flags, "make.cpp", "main.cpp", "-o", "p"], cwd=tmp_path, env=env)
    assert run(["./p"], cwd=tmp_path).stdout.split() == ["1", "8"]       # x^3: 1, 8


def test_variables_named_by_code_without_bitcode_stay_external(tmp_path):
    """A marker link makes the program's own pointer variables internal, as LTO does in an
    executable (lto/text_passes.internalize_variables), except those that an object without
    bitcode (plain clang's) names: it sets `scale` through `factor` here, and the gradient
    sees the value it set."""
    (tmp_path / "kernel.c").write_text(KERNEL + "static double half = 0.5;\n"
                                       "double *shift = &half, *factor = &scale;\n"
                                       "double g(double *x) { return f(x) * *factor / scale + "
                                       "*shift * x[0]; }\n")
    (tmp_path / "plain.c").write_text("extern double scale, *factor;\n"
                                      "void set_scale(double s) { scale = s; *factor = s; }\n")
    (tmp_path / "main.c").write_text(r"""
#include <math.h>
#include <stdio.h>
extern double __enzyme_autodiff(void *, ...);
extern int enzyme_dup;
double g(double *x);
void set_scale(double);
int main(void) {
  double x[2] = {0.7, 1.3}, dx[2] = {0, 0};
  set_scale(3.0);
  __enzyme_autodiff((void *)g, enzyme_dup, x, dx);
  printf("%.12f %.12f\n", dx[0], dx[1]);
  return 0;
}
""")
    run(["enzyme-cc", "-O2", "-c", "kernel.c", "-o", "kernel.o"], cwd=tmp_path)
    run(["enzyme-cc", "-O2", "-c", "main.c", "-o", "main.o"], cwd=tmp_path)
    run(["clang-22", "-O2", "-c", "plain.c", "-o", "plain.o"], cwd=tmp_path)
    dump = tmp_path / "dump"
    env = dict(os.environ, ENZYME_CC_CACHE="0", ENZYME_CC_DUMP_DIR=str(dump))
    run(["enzyme-cc", "-O2", "kernel.o", "main.o", "plain.o", "-lm", "-o", "p"], cwd=tmp_path,
        env=env)
    dx = [float(v) for v in run(["./p"], cwd=tmp_path).stdout.split()]
    assert dx == pytest.approx([3 * math.cos(0.7) * 1.3 ** 2 + 0.5, 3 * math.sin(0.7) * 2 * 1.3])
    before = (dump / "before-ad.ll").read_text()
    assert re.search(r"^@factor = (?!internal )", before, re.M)
    # (`shift`, named by bitcode only, became internal: the optimizer folded it or kept it local)
    assert not re.search(r"^@shift = (?!internal )", before, re.M)
