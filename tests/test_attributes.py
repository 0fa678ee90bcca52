"""Enzyme's clang attributes (enzyme_cc/plugin/enzyme_attributes.cpp): every spelling, on functions,
globals and static members, in C and C++ templates, through every compile path; unknown and
unsupported enzyme_* attributes are compile errors. Derivatives are checked against analytic
values in both modes at -O0 and -O2."""
import os
import subprocess

import pytest

from conftest import run, floats

LEVELS = ("-O0", "-O2")

C_PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
extern double __enzyme_autodiff(void *, ...);
extern double __enzyme_fwddiff(void *, ...);

double calls;                                     /* bookkeeping a gradient must not see */
__attribute__((enzyme_inactive)) double counted(double x) { calls += x; return x * x; }
[[enzyme_inactive_noblock]] double jitter(double x) { return 5 * x; }
[[enzyme::inactive]] double last_x;               /* a cache: holds no derivative */
__attribute__((noinline)) void remember(double x) { last_x = x; }
__attribute__((noinline)) double recall(void) { return last_x * last_x; }
/* differentiated as log1p, whatever its body says */
[[enzyme::function_like("log1p")]] double my_log1p(double x) { return 2 * x; }
double scale_shadow;
__attribute__((enzyme_shadow(scale_shadow))) double scale = 2.0;
/* a sparse-accumulation hint: differentiated as written (d/dx 3x^2 = 6x) */
[[enzyme::sparse_accumulate]] __attribute__((noinline)) double tripled(double x) { return 3 * x * x; }

double f(double x) {
  remember(x);
  return counted(x) + jitter(x) + recall() * x + my_log1p(x) + scale * x * x + tripled(x);
}

static int failures;
static void check(const char *name, double got, double want) {
  int ok = got - want < 1e-9 && want - got < 1e-9;
  printf("CHECK %s %.12g %.12g\n", name, got, want);
  failures += !ok;
}

int main(void) {
  for (int rep = 0; rep < 2; ++rep) {
    double x = 1.5 + rep;
    scale_shadow = 0;
    /* d/dx: recall()*x with last_x constant -> x^2; log1p -> 1/(1+x); scale*x^2 -> 2*scale*x */
    double want = x * x + 1 / (1 + x) + 2 * 2.0 * x + 6 * x;
    check("reverse", __enzyme_autodiff((void *)f, x), want);
    check("scale_adjoint", scale_shadow, x * x);          /* df/dscale accumulated */
    scale_shadow = 0;
    check("forward", __enzyme_fwddiff((void *)f, x, 1.0), want);
    scale_shadow = 1.0;                                   /* seed the global's tangent */
    check("forward_seeded", __enzyme_fwddiff((void *)f, x, 0.0), x * x);
    check("tripled", __enzyme_autodiff((void *)tripled, x), 6 * x);
  }
  return failures != 0;
}
"""

CXX_PROGRAM = r"""
#include <cstdio>
extern double __enzyme_autodiff(void *, ...);
extern double __enzyme_fwddiff(void *, ...);

double sink;
template <typename T> [[enzyme::inactive]] T tracked(T x) { sink += x; return x * x; }
template <typename T> struct Model {
  [[enzyme::inactive]] static T noise(T x) { return 3 * x; }
  __attribute__((enzyme_function_like("log1p"))) static T soft(T x) { return 7 * x; }
  static T offset_shadow;
  __attribute__((enzyme_shadow(offset_shadow))) static T offset;
  T eval(T x) const { return tracked(x) + noise(x) + soft(x) + offset * x + x * x; }
};
template <typename T> T Model<T>::offset_shadow = 0;
template <typename T> T Model<T>::offset = 1.5;
struct Params {
  static double k_shadow;
  [[enzyme_shadow(k_shadow)]] static double k;
};
double Params::k_shadow = 0;
double Params::k = 4.0;
namespace lib {
[[enzyme_inactive_noblock]] double rng(double);
}
double lib::rng(double x) { return 100 * x; }

double f(double x) { Model<double> m; return m.eval(x) + Params::k * x + lib::rng(x); }

static int failures;
static void check(const char *name, double got, double want) {
  bool ok = got - want < 1e-9 && want - got < 1e-9;
  std::printf("CHECK %s %.12g %.12g\n", name, got, want);
  failures += !ok;
}

int main() {
  double x = 2.0, want = 1.0 / (1 + x) + 1.5 + 2 * x + 4.0;
  check("reverse", __enzyme_autodiff((void *)f, x), want);
  check("offset_adjoint", Model<double>::offset_shadow, x);
  check("k_adjoint", Params::k_shadow, x);
  Model<double>::offset_shadow = Params::k_shadow = 0;
  check("forward", __enzyme_fwddiff((void *)f, x, 1.0), want);
  return failures != 0;
}
"""


def _checks(out: str) -> dict:
    rows = [line.split() for line in out.splitlines() if line.startswith("CHECK ")]
    return {r[1]: (float(r[2]), float(r[3])) for r in rows}


@pytest.mark.parametrize("level", LEVELS)
def test_c_attributes_every_kind(tmp_path, level, c_program):
    out = c_program(C_PROGRAM, flags=(level,))
    checks = _checks(out)
    assert set(checks) == {"reverse", "scale_adjoint", "forward", "forward_seeded", "tripled"}
    for got, want in checks.values():
        assert got == pytest.approx(want, abs=1e-9)


@pytest.mark.parametrize("level", LEVELS)
def test_cxx_templates_static_members_namespaces(tmp_path, level, c_program):
    out = c_program(CXX_PROGRAM, name="prog.cpp", flags=(level,), driver="enzyme-c++", libs=())
    assert len(_checks(out)) == 4


def test_preprocessed_source_then_compile(tmp_path):
    """-E keeps the attributes as written; the compile of the .i gives them their meaning."""
    (tmp_path / "prog.c").write_text(C_PROGRAM)
    run(["enzyme-cc", "-E", "prog.c", "-o", "prog.i"], cwd=tmp_path)
    run(["enzyme-cc", "-O2", "-c", "prog.i", "-o", "prog.o"], cwd=tmp_path)
    run(["enzyme-cc", "prog.o", "-o", "prog"], cwd=tmp_path)
    assert len(_checks(run([str(tmp_path / "prog")]).stdout)) == 5


def test_cache_folder_of_its_own_uses_the_installed_plugin(tmp_path):
    """ENZYME_CC_CACHE_DIR (a cache per project or CI job): the compile loads the plugin that
    set-up built, the same source for the same clang, instead of building another into the new
    folder (15-25 s per folder); the attributes keep their meaning."""
    from enzyme_cc.plugin import plugin_path
    installed = plugin_path()
    (tmp_path / "prog.c").write_text(C_PROGRAM)
    env = dict(os.environ, ENZYME_CC_CACHE_DIR=str(tmp_path / "own"))
    r = run(["enzyme-cc", "-v", "-O2", "prog.c", "-o", "prog"], cwd=tmp_path, env=env)
    assert f"-fplugin={installed}" in r.stderr, r.stderr[-2000:]
    assert not list((tmp_path / "own").glob("enzyme-attributes-*"))
    checks = _checks(run([str(tmp_path / "prog")]).stdout)
    assert len(checks) == 5
    for got, want in checks.values():
        assert got == pytest.approx(want, abs=1e-9)


def test_has_attribute_sees_them(tmp_path):
    (tmp_path / "h.c").write_text("#if __has_attribute(enzyme_inactive) && "
                                  "__has_c_attribute(enzyme::function_like)\nyes\n#endif\n")
    assert "yes" in run(["enzyme-cc", "-E", "h.c"], cwd=tmp_path).stdout


def test_through_ccache_and_make(tmp_path):
    (tmp_path / "prog.c").write_text(C_PROGRAM)
    (tmp_path / "Makefile").write_text("prog: prog.o\n\t$(CC) prog.o -o prog\n"
                                       "prog.o: prog.c\n\t$(CC) -O2 -c prog.c -o prog.o\n")
    env = dict(os.environ, CCACHE_DIR=str(tmp_path / "cache"))
    for _ in range(2):          # the second build is a cache hit
        run(["make", "-s", "-B", "CC=ccache enzyme-cc"], cwd=tmp_path, env=env)
        assert len(_checks(run([str(tmp_path / "prog")]).stdout)) == 5
    stats = dict(line.split("\t") for line in
                 run(["ccache", "--print-stats"], env=env).stdout.splitlines())
    assert int(stats["direct_cache_hit"]) + int(stats["preprocessed_cache_hit"]) >= 1


def test_declaration_of_a_function_without_bitcode(tmp_path):
    """An enzyme_inactive declaration whose definition is in an object plain clang built (no
    bitcode to see the attribute in): the registration made where it is declared carries it."""
    (tmp_path / "ext.c").write_text("double ext_noise(double x) { return x * x * x; }\n")
    (tmp_path / "main.c").write_text(r"""
#include <stdio.h>
extern double __enzyme_autodiff(void *, ...);
__attribute__((enzyme_inactive)) double ext_noise(double);
double f(double x) { return ext_noise(x) + 3 * x; }
int main(void) { printf("%g\n", __enzyme_autodiff((void *)f, 2.0)); }
""")
    run(["clang-22", "-O2", "-c", "ext.c", "-o", "ext.o"], cwd=tmp_path)
    for level in LEVELS:
        run(["enzyme-cc", level, "main.c", "ext.o", "-o", "prog"], cwd=tmp_path)
        assert floats(run([str(tmp_path / "prog")]).stdout) == [3.0]


def test_marked_declaration_defined_nowhere(tmp_path):
    """An enzyme_inactive extern global that no object defines, whose only use the optimizer
    drops (an argument the callee ignores; Enzyme's ReverseMode/customglob.cpp): the
    registration variable does not keep a reference to it after AD, so the program links."""
    (tmp_path / "main.cpp").write_text(r"""
#include <cstdio>
#include <cstdlib>
extern double __enzyme_autodiff(void *, ...);
enum class Pool { Host };
__attribute__((enzyme_inactive)) extern Pool default_pool;
__attribute__((noinline)) static void *get(int n, Pool) { return malloc(n); }
double cube(double a) {
  double *d = (double *)get(sizeof(double), default_pool);
  d[0] = a * a * a;
  double r = d[0];
  free(d);
  return r;
}
int main() { printf("%g\n", __enzyme_autodiff((void *)cube, 2.0)); }
""")
    for level in LEVELS:
        run(["enzyme-c++", level, "main.cpp", "-o", "prog"], cwd=tmp_path)
        assert floats(run([str(tmp_path / "prog")]).stdout) == [12.0]


@pytest.mark.parametrize("spelling", ["__attribute__((enzyme_inactve)) double f(double x);",
                                      "[[enzyme::inactve]] double f(double x);",
                                      "[[enzyme_frobnicate]] double g;"])
@pytest.mark.parametrize("quiet", [[], ["-w"], ["-Wno-unknown-attributes"]])
def test_unknown_enzyme_attribute_is_a_compile_error(tmp_path, spelling, quiet):
    (tmp_path / "bad.c").write_text(spelling + "\n__attribute__((other_vendor_attr)) int k;\n")
    r = run(["enzyme-cc", *quiet, "-c", "bad.c", "-o", "bad.o"], cwd=tmp_path, check=False)
    assert r.returncode != 0
    name = spelling.split("((")[-1].split("[[")[-1].split(")")[0].split("]")[0]
    assert f"error: unknown Enzyme attribute '{name}'" in r.stderr
    assert "bad.c:1:" in r.stderr
    # attributes of other vendors stay warnings, and only where the user's flags show them
    assert ("other_vendor_attr" in r.stderr) == (not quiet)
    assert "error: unknown attribute 'other_vendor_attr'" not in r.stderr


@pytest.mark.parametrize("source, words", [
    ("__attribute__((enzyme_sparse_accumulate(1))) void acc(double *p, double v) { *p += v; }",
     "'enzyme_sparse_accumulate' takes no arguments"),
    ("void f(double *x, int n) { [[enzyme::checkpoint(\"revolv\", 4)]] "
     "for (int i = 0; i < n; ++i) x[i] *= 2; }",
     "'enzyme::checkpoint': the schedule must be one of"),
    ("void f(double *x, int n) { [[enzyme::checkpoint(\"revolve\", n)]] "
     "for (int i = 0; i < n; ++i) x[i] *= 2; }",
     "must be a non-negative integer constant"),
    ("void f(double *x, int n) { [[enzyme_checkpointing_enable(\"revolve\", 4, 1)]] "
     "for (int i = 0; i < n; ++i) x[i] *= 2; }",
     "takes no more than 2 arguments"),
    ("void f(double *x, int n) { int i = 0; [[enzyme::checkpoint]] "
     "while (i < n) x[i++] *= 2; }",
     "'enzyme::checkpoint' applies to for statements only"),
    ("void f(double *x, int n) {\n#pragma enzyme checkpoint(\"sqrt\")\n"
     "for (int i = 0; i < n; ++i) x[i] *= 2; }",
     "'enzyme_checkpoint': the schedule must be one of"),
    ("void f(double *x, int n) {\n#pragma enzyme unroll\n"
     "for (int i = 0; i < n; ++i) x[i] *= 2; }",
     "unknown '#pragma enzyme unroll'"),
    ("__attribute__((enzyme_function_like)) double f(double x) { return x; }",
     "takes one string argument"),
    ("double s; __attribute__((enzyme_shadow(nonexistent))) double g;",
     "takes one argument, the global variable that holds the shadow"),
    ("int local(void) { [[enzyme::inactive]] int v = 1; return v; }",
     "'enzyme::inactive' applies to functions and global variables only"),
])
def test_misused_or_unsupported_attribute_is_an_error(tmp_path, source, words):
    (tmp_path / "bad.c").write_text(source + "\n")
    r = run(["enzyme-cc", "-std=c23", "-c", "bad.c", "-o", "bad.o"], cwd=tmp_path, check=False)
    assert r.returncode != 0 and words in r.stderr, r.stderr


@pytest.mark.parametrize("decl,args,what", [
    ("typedef struct { double a, b; } P; double g(P p) { return p.a * p.b * p.b; }\n"
     "double __enzyme_fwddiff(void *, ...);",
     "P p = {0.5, 2.0}, dp = {1.0, 0.0}; double t = __enzyme_fwddiff((void *)g, p, dp);",
     "a struct of type 'P' passed by value to __enzyme_fwddiff"),
    ("#include <complex.h>\ndouble complex g(double complex z) { return z * z; }\n"
     "double complex __enzyme_fwddiff(void *, ...);",
     "double complex z = 1.0, t = __enzyme_fwddiff((void *)g, z, (double complex)1.0);",
     "a complex number of type '_Complex double' passed by value to __enzyme_fwddiff"),
])
def test_struct_by_value_to_fwddiff_is_an_error(tmp_path, decl, args, what):
    """A struct or complex number passed by value to __enzyme_fwddiff: the ABI splits it into
    fields that forward mode read as (value, tangent) pairs in the wrong order, a silently wrong
    tangent (a new-user check). Now a compile error saying what to pass instead."""
    (tmp_path / "f.c").write_text(f"{decl}\nint main(void) {{ {args} return 0; }}\n")
    r = run(["enzyme-cc", "-O2", "-c", "f.c", "-o", "f.o"], cwd=tmp_path, check=False)
    assert r.returncode != 0 and what in r.stderr, r.stderr
    assert "pass each field followed by its tangent" in r.stderr, r.stderr
    assert r.stderr.count("error:") == 1, r.stderr


def test_handwritten_unknown_annotation_is_a_link_error(tmp_path):
    (tmp_path / "p.c").write_text(r"""
extern double __enzyme_autodiff(void *, ...);
__attribute__((annotate("enzyme_sparse_acumulate"))) double f(double x) { return x * x; }
int main(void) { return __enzyme_autodiff((void *)f, 1.0) != 2.0; }
""")
    r = run(["enzyme-cc", "-O2", "p.c", "-o", "p"], cwd=tmp_path, check=False)
    assert r.returncode != 0
    assert "unknown Enzyme annotation 'enzyme_sparse_acumulate' on 'f'" in r.stderr
    assert "Traceback" not in r.stderr


INACTIVE_GLOBAL_MIXED = r"""
#include <stdio.h>
extern double __enzyme_autodiff(void *, ...);
extern double __enzyme_fwddiff(void *, ...);
[[enzyme::inactive]] static double tally = 5.5;     /* bookkeeping: holds no derivative */
/* one pointer that is either the inactive global or active memory */
__attribute__((noinline)) static void scale(int to_tally, double a, double *c) {
  double *p = to_tally ? &tally : c;
  *p *= a;
}
double f(int to_tally, double a) {
  double dat = a;
  scale(to_tally, a, &dat);
  return dat;
}
int main(void) {
  int bad = 0;
  for (int rep = 0; rep < 2; ++rep) {
    double a = 3.0 + rep;
    bad |= __enzyme_autodiff((void *)f, 0, a) != 2 * a;          /* d(a*a)/da */
    bad |= __enzyme_autodiff((void *)f, 1, a) != 1.0;            /* dat = a; tally drops it */
    bad |= __enzyme_fwddiff((void *)f, 0, a, 1.0) != 2 * a;
    bad |= __enzyme_fwddiff((void *)f, 1, a, 1.0) != 1.0;
  }
  printf("%d %g\n", bad, tally);
  return bad;
}
"""


@pytest.mark.parametrize("level", LEVELS)
def test_inactive_global_meeting_active_memory(tmp_path, level, c_program):
    """A pointer choosing between an enzyme_inactive global and active memory (a select): the
    active branch differentiates, the global's branch carries nothing."""
    out = c_program(INACTIVE_GLOBAL_MIXED, flags=(level,))
    bad, tally = floats(out)
    assert bad == 0
    assert tally == pytest.approx(5.5 * 3.0 * 3.0 * 4.0 * 4.0)   # the primal ran (4 calls)
