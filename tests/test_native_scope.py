"""Objects AD cannot reach keep their compiled code at a marker link (lto/link.py
_native_modules): only objects that define or name something AD may reach, or hold an enzyme
name or attribute, are merged, differentiated and compiled again. Gradients
must not change, and the AD cache must remember which objects stayed native."""
import os
import re

from conftest import run

KERNEL = r"""
#include <math.h>
double scale = 2.0;                          /* a global AD reads */
static double sq(double t) { return t * t; }
double f(double *x) { return scale * sin(x[0]) * sq(x[1]); }
"""
# names f: AD may look at callers, so it stays with the AD module
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


def _link(tmp_path, objs, env, exe):
    r = run(["enzyme-cc", "-O2", "-v", *objs, "-lm", "-o", exe], cwd=tmp_path, env=env)
    relink = [ln for ln in r.stderr.splitlines() if ln.startswith("enzyme-cc: ") and "-o" in ln]
    out = run([f"./{exe}"], cwd=tmp_path).stdout.split()
    return set(re.findall(r"([-\w]+)\.o\b", relink[-1])), out


def test_unreached_objects_keep_their_code(tmp_path):
    objs = _build(tmp_path)
    dump = tmp_path / "dump"
    env = dict(os.environ, ENZYME_CC_CACHE="0", ENZYME_CC_DUMP_DIR=str(dump))
    linked, out = _link(tmp_path, objs, env, "p")
    assert linked == {"enzyme-ad", "unrelated", "slow"}
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
    assert list((tmp_path / "cache").glob("*.o.native"))
    second = _link(tmp_path, objs, env, "p2")          # a cache hit
    assert first == second and first[0] == {"enzyme-ad", "unrelated", "slow"}
