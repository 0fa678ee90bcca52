"""Code the AD core cannot (or must not) differentiate fails at link time with a clang-shaped
error: `enzyme-cc: error: ...` on stderr, a non-zero exit, no Python traceback, no output file,
the function named, a hint, and with -g the source file:line of the offending call."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent

MYSTERY_LIB = "double mystery(double x) { return x * x + 1; }\n"

# each case: sources, the function the error must name, the line (1-based) it must point at
EXTERNAL = """\
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
double mystery(double);

double uses_mystery(double x) {
  return mystery(x) * x;
}

int main(void) {
  printf("%f\\n", __enzyme_autodiff((void *)uses_mystery, 2.0));
  return 0;
}
"""

TOO_FEW = """\
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
double two_args(double x, double y) { return x * y; }

int main(void) {
  printf("%f\\n", __enzyme_autodiff((void *)two_args, 2.0));
  return 0;
}
"""

# a pointer into enzyme_const memory stored in records that have shadows, then read as doubles
# through them: its shadow would be null (a fault, or NaN once the optimizer sees the null)
SMALL_STRUCT_BY_ADDRESS = """\
#include <stdio.h>
int enzyme_dup;
void __enzyme_autodiff(void *, ...);
typedef struct { double k, c; } Params;
double energy(double x, Params p) { return p.k * x * x + p.c * x; }
int main(void) {
  Params p = {2, 3}, dp = {0, 0};
  __enzyme_autodiff((void *)energy, 1.5, enzyme_dup, &p, &dp);
  printf("%g %g\\n", dp.k, dp.c);
  return 0;
}
"""


def test_small_struct_given_by_address_says_to_give_it_itself(tmp_path):
    """A struct of 16 bytes or fewer taken by value arrives as its fields; given by address (the
    form for larger structs) the error says to give the struct itself (a new user followed the
    rule for larger structs and read "has type double")."""
    (tmp_path / "s.c").write_text(SMALL_STRUCT_BY_ADDRESS)
    r = subprocess.run([str(BIN / "enzyme-cc"), "-O2", "s.c", "-o", "s"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "a struct of 16 bytes or fewer taken by value arrives as its fields: give the " \
           "struct itself (not its address)" in r.stderr, r.stderr


GLOBAL_MEMO = r"""
#include <unordered_map>
static std::unordered_map<int, double> g_memo;
static double P(int n, double x) {
  if (n == 0) return 1.0;
  if (n == 1) return x;
  auto it = g_memo.find(n);
  if (it != g_memo.end()) return it->second;
  double v = ((2 * n - 1) * x * P(n - 1, x) - (n - 1) * P(n - 2, x)) / n;
  g_memo[n] = v;
  return v;
}
double f(double x) { g_memo.clear(); return P(6, x); }
double __enzyme_autodiff(void *, ...);
int main() { return __enzyme_autodiff((void *)f, 0.3) > 100; }
"""


def test_static_container_memoizing_names_the_global(tmp_path):
    """Active results memoized in a global std::unordered_map: the refusal named neither the
    global nor the way out (its hint spoke of code without bitcode)."""
    (tmp_path / "m.cpp").write_text(GLOBAL_MEMO)
    r = subprocess.run([str(BIN / "enzyme-c++"), "-O2", "m.cpp", "-o", "m"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "the pointer is read from the global 'g_memo'" in r.stderr, r.stderr
    assert "declare it in the differentiated function, or pass it as an argument" in r.stderr


MISNAMED_MARKER = r"""
#include <cstdio>
double __enzyme_fwddiff(void *, ...);
float fwd_f(void *, ...) asm("__enzyme_fwddif");
double sq(double x) { return x * x; }
float sqf(float x) { return x * x; }
int main() {
  printf("%g\n", __enzyme_fwddiff((void *)sq, 3.0, 1.0));
  printf("%g\n", fwd_f((void *)sqf, 3.0f, 1.0f));
}
"""


def test_unsupported_entry_point_located_at_its_own_call(tmp_path):
    """A misspelled entry point whose name a supported one begins with: the error quoted the
    supported one's call (its line and instruction)."""
    (tmp_path / "b.cpp").write_text(MISNAMED_MARKER)
    r = subprocess.run([str(BIN / "enzyme-c++"), "-O0", "-g", "b.cpp", "-o", "b"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "b.cpp:9:" in r.stderr and "'__enzyme_fwddif' is an Enzyme entry point" in r.stderr


CONST_VECTOR_CAPTURED = r"""
#include <functional>
#include <vector>
extern "C" { extern int enzyme_dup, enzyme_const; void __enzyme_autodiff(void *, ...); }
struct Sample { int step; double value; };
static void integrate(double a, int n, const std::function<void(int, double)> &observe) {
  double y = 1.0;
  for (int k = 0; k < n; k++) { y += 0.1 * a * y; observe(k, y); }
}
double misfit(const double *p, const std::vector<Sample> *data) {
  double J = 0;
  integrate(p[0], 4, [&](int k, double s) { double r = s - (*data)[k].value; J += r * r; });
  return J;
}
int main() {
  std::vector<Sample> data = {{0, 1.0}, {1, 1.2}, {2, 1.1}, {3, 1.5}};
  double p[1] = {0.3}, dp[1] = {0};
  __enzyme_autodiff((void *)misfit, enzyme_dup, p, dp, enzyme_const, &data);
  return 0;
}
"""


@pytest.mark.parametrize("level", ["-O0", "-O1"])
def test_const_vector_captured_by_a_callback_is_refused(tmp_path, level):
    """A pointer to a std::vector of records holding doubles, passed enzyme_const and captured
    by a lambda a std::function calls: its slot in the closure has a shadow, and the derivative
    read the records through a null shadow (a segfault, found by a new-user check). Its type tag
    names the vector, whose element type holds doubles: refused as a `double *` is."""
    (tmp_path / "m.cpp").write_text(CONST_VECTOR_CAPTURED)
    r = subprocess.run([str(BIN / "enzyme-c++"), level, "m.cpp", "-o", "m"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "a pointer to double data without a shadow (argument 2 of 'misfit(" in r.stderr, \
        r.stderr
    assert "pass it enzyme_dup with a shadow" in r.stderr, r.stderr


CONST_PTR_IN_RECORDS = """\
int enzyme_const;
double __enzyme_fwddiff(void *, ...);
typedef struct { double a; double *p; } R;
__attribute__((noinline)) double weigh(double x, double *q, int n) {
  R v[4];
  for (int i = 0; i < 4; i++) v[i] = (R){x * (i + 1), q + i};
  double s = 0;
  for (int i = 0; i < n; i++) s += v[i].a * v[i].p[0];
  return s;
}
int main(void) {
  double q[4] = {2, 3, 5, 7};
  return __enzyme_fwddiff((void *)weigh, 1.5, 1.0, enzyme_const, q, enzyme_const, 4) > 0;
}
"""

# the pointer stored into the records is read from a constant argument's memory: the message
# says so, and the hint is about that argument (not about code without bitcode)
PTR_FROM_CONST_ARG = """\
int enzyme_const;
double __enzyme_fwddiff(void *, ...);
typedef struct { double a; double *p; } R;
typedef struct { double *data; } Holder;
__attribute__((noinline)) double weigh(double x, const Holder *h, int n) {
  R v[4];
  for (int i = 0; i < 4; i++) v[i] = (R){x * (i + 1), h->data + i};
  double s = 0;
  for (int i = 0; i < n; i++) s += v[i].a * v[i].p[0];
  return s;
}
int main(void) {
  double q[4] = {2, 3, 5, 7};
  Holder hd = {q};
  return __enzyme_fwddiff((void *)weigh, 1.5, 1.0, enzyme_const, &hd, enzyme_const, 4) > 0;
}
"""

# an expression record holding the address of an enzyme_const vector (itself a record with a
# data pointer), handed to a function that reads the data through it: the derivative read
# through a null shadow (a crash; Eigen's `(*A) * x` with A enzyme_const is this shape)
CONST_IN_EXPRESSION = """\
int enzyme_const, enzyme_dup;
void __enzyme_autodiff(void *, ...);
typedef struct { double *data; int n; } Vec;
typedef struct { const Vec *a; const double *x; } Expr;
const Expr *last_expr;
__attribute__((noinline)) double dot(const Expr *e) {
  last_expr = e;
  double s = 0;
  for (int i = 0; i < e->a->n; i++) s += e->a->data[i] * e->x[i] * e->x[i];
  return s;
}
__attribute__((noinline)) double f(const Vec *a, const double *x) {
  Expr e = {a, x};
  return dot(&e);
}
int main(void) {
  double d[3] = {1, 2, 3}, x[3] = {1, 1, 1}, dx[3] = {0};
  Vec a = {d, 3};
  __enzyme_autodiff((void *)f, enzyme_const, &a, enzyme_dup, x, dx);
  return dx[0] > 0 && last_expr != 0;     /* (read: the global and its store stay) */
}
"""

# a variadic setter stores one of its variadic doubles into the caller's record: it needs a
# derivative that a va_list cannot give (a variadic reporter that only formats text is kept as
# a primal call: tests/ad_programs/variadic_error_reporter.c)
VARIADIC_STORE = """\
#include <stdarg.h>
typedef struct { double h; int n; } Opts;
__attribute__((noinline)) void set_opts(Opts *o, int n, ...) {
  va_list ap;
  va_start(ap, n);
  o->h = va_arg(ap, double);
  o->n = n;
  va_end(ap);
}
double scaled(double x) {
  Opts o = {0, 0};
  set_opts(&o, 1, x * x);
  return o.h * o.n;
}
double __enzyme_autodiff(void *, ...);
int main(void) { return __enzyme_autodiff((void *)scaled, 2.0) > 0; }
"""

OUT_ON_INT = """\
#include <stdio.h>
int enzyme_out;
double __enzyme_autodiff(void *, ...);
double scaled(double x, int k) { return x * k; }

int main(void) {
  printf("%f\\n", __enzyme_autodiff((void *)scaled, 2.0, enzyme_out, 3));
  return 0;
}
"""

TAPE_TOO_SMALL = """\
#include <stdio.h>
int enzyme_allocated, enzyme_tape;
void __enzyme_augmentfwd(void *, ...);
void square(double *x, double *y) { *y = *x * *x; }

int main(void) {
  double x = 2, dx = 0, y, dy = 1, tape[1];
  __enzyme_augmentfwd((void *)square, enzyme_allocated, 8, enzyme_tape, tape, &x, &dx, &y, &dy);
  return 0;
}
"""

TAPE_IN_AUTODIFF = """\
#include <stdio.h>
int enzyme_tape;
double __enzyme_autodiff(void *, ...);
double sq(double x) { return x * x; }

int main(void) {
  char t[64];
  printf("%f\\n", __enzyme_autodiff((void *)sq, enzyme_tape, t, 2.0));
  return 0;
}
"""

BATCH = """\
#include <stdio.h>
double __enzyme_batch(void *, ...);
double sq(double x) { return x * x; }

int main(void) {
  printf("%f\\n", __enzyme_batch((void *)sq, 2.0));
  return 0;
}
"""

# two lanes of sq do not fit in one double
BATCH_RESULT = """\
#include <stdio.h>
extern int enzyme_width, enzyme_vector;
double __enzyme_batch(void *, ...);
double sq(double x) { return x * x; }

int main(void) {
  printf("%f\\n", __enzyme_batch((void *)sq, enzyme_width, 2, enzyme_vector, 2.0, 3.0));
  return 0;
}
"""

# three values for two lanes
BATCH_TOO_MANY = """\
#include <stdio.h>
extern int enzyme_width;
typedef struct { double v[2]; } D2;
D2 __enzyme_batch(void *, ...);
double sq(double x) { return x * x; }

int main(void) {
  printf("%f\\n", __enzyme_batch((void *)sq, enzyme_width, 2, 2.0, 3.0, 4.0).v[0]);
  return 0;
}
"""

ATOMIC_DOUBLE = """\
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
double sum2(const double *x, int n) {
  _Atomic double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * 2;
  return s;
}

int main(void) {
  double x[2] = {1, 2}, dx[2] = {0};
  __enzyme_autodiff((void *)sum2, x, dx, 2);
  return 0;
}
"""

UNKNOWN_ENTRY = """\
#include <stdio.h>
extern double __enzyme_likelihood(void *, double, double);
double g(double in) { return in * in; }

int main(void) {
  printf("%f\\n", __enzyme_likelihood((void *)g, 1.0, 2.0));
  return 0;
}
"""

ERREST_NO_BITCODE = """\
#include <stdio.h>
double unknown(double in);
extern double __enzyme_error_estimate(void *, double, double);
double g(double in) { return unknown(in); }

int main(void) {
  printf("%f\\n", __enzyme_error_estimate((void *)g, 1.0, 1.0));
  return 0;
}
"""

QSORT_IN_GRADIENT = r"""
#include <stdio.h>
#include <stdlib.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
double weighted(double *x, int n) {
  qsort(x, n, sizeof(double), cmp);
  double s = 0;
  for (int i = 0; i < n; i++) s += (i + 1) * x[i];
  return s;
}
int main(void) {
  double x[3] = {3, 1, 2}, dx[3] = {0};
  __enzyme_autodiff((void *)weighted, enzyme_dup, x, dx, enzyme_const, 3);
  printf("%g\n", dx[0]);
  return 0;
}
"""

THREAD_IN_GRADIENT = r"""
#include <pthread.h>
#include <stdio.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
typedef struct { const double *x; int n; double s; } Part;
static void *work(void *p) {
  Part *w = p;
  for (int i = 0; i < w->n; i++) w->s += w->x[i] * w->x[i];
  return 0;
}
double sumsq(const double *x, int n) {
  Part w = {x, n, 0};
  pthread_t t;
  pthread_create(&t, 0, work, &w);
  pthread_join(t, 0);
  return w.s;
}
int main(void) {
  double x[3] = {1, 2, 3}, dx[3] = {0};
  __enzyme_autodiff((void *)sumsq, enzyme_dup, x, dx, enzyme_const, 3);
  printf("%g\n", dx[0]);
  return 0;
}
"""

CUSTOM_AUG_RETURN = r"""
#include <stdio.h>
extern int enzyme_dup;
void __enzyme_autodiff(void *, ...);
__attribute__((noinline)) double dot(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}
/* returns the tape alone, but dot returns a double */
void *dot_aug(const double *a, const double *da, const double *b, const double *db, int n) {
  return 0;
}
void dot_rev(const double *a, double *da, const double *b, double *db, int n, double dr,
             void *tape) {
  for (int i = 0; i < n; i++) { da[i] += dr * b[i]; db[i] += dr * a[i]; }
}
void *__enzyme_register_gradient_dot[3] = {(void *)dot, (void *)dot_aug, (void *)dot_rev};
double f(const double *a, const double *b) {
  return dot(a, b, 3) * dot(a, a, 3);
}
int main(void) {
  double a[3] = {1, 2, 3}, b[3] = {4, 5, 6}, da[3] = {0}, db[3] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, a, da, enzyme_dup, b, db);
  printf("%g\n", da[0]);
  return 0;
}
"""

CUSTOM_REV_RETURN = r"""
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
__attribute__((noinline)) double mul(double x, double y) { return x * y; }
double mul_aug(double x, double y) { return x * y; }
/* two float arguments, one adjoint returned */
double mul_rev(double x, double y, double dr) { return dr * y; }
void *__enzyme_register_gradient_mul[3] = {(void *)mul, (void *)mul_aug, (void *)mul_rev};
double g(double x) {
  return mul(x, x + 1.0) + x;
}
int main(void) {
  printf("%g\n", __enzyme_autodiff((void *)g, 2.0));
  return 0;
}
"""

ERREST_CUSTOM = """\
#include <stdio.h>
#include <math.h>
double __enzyme_error_estimate(void *, ...);
__attribute__((noinline)) double myexp(double x) { return exp(x); }
double dmyexp(double x, double dx) { return exp(x) * dx; }
void *__enzyme_register_derivative_myexp[] = {(void *)myexp, (void *)dmyexp};
double g(double x) { return myexp(x) * 2; }
int main(void) {
  printf("%f\\n", __enzyme_error_estimate((void *)g, 1.0, 0.0));
  return 0;
}
"""

# sincos stores results that depend on x through a pointer the caller passed enzyme_const
SINCOS_CONST_OUT = """\
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
int enzyme_const;
double __enzyme_autodiff(void *, ...);
double polar(double x, double *out) {
  sincos(x, &out[0], &out[1]);
  return x * x;
}
int main(void) {
  double out[2];
  printf("%f\\n", __enzyme_autodiff((void *)polar, 0.5, enzyme_const, out));
  return 0;
}
"""

# modfl: clang's llvm.modf.f80 (long double functions have no rules)
MODF_LONG_DOUBLE = """\
#include <math.h>
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
double frac(double x) {
  long double ip;
  return (double)modfl((long double)x * 3, &ip);
}
int main(void) {
  printf("%f\\n", __enzyme_autodiff((void *)frac, 0.5));
  return 0;
}
"""

ERREST_SINCOS = """\
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
double __enzyme_error_estimate(void *, ...);
double g(double x) {
  double s, c;
  sincos(x, &s, &c);
  return s * c;
}
int main(void) {
  printf("%f\\n", __enzyme_error_estimate((void *)g, 1.0, 0.0));
  return 0;
}
"""

ERREST_WIDTH = """\
#include <stdio.h>
int enzyme_width;
typedef struct { double a, b; } two;
two __enzyme_error_estimate(void *, ...);
double sq(double x) { return x * x; }
int main(void) {
  two t = __enzyme_error_estimate((void *)sq, enzyme_width, 2, 1.0, 0.0, 1.0);
  printf("%f\\n", t.a);
  return 0;
}
"""

ERREST_LONG_DOUBLE = """\
#include <stdio.h>
double __enzyme_error_estimate(void *, ...);
long double sq(long double x) { return x * x; }
int main(void) {
  printf("%f\\n", __enzyme_error_estimate((void *)sq, (long double)1.5, (long double)0.0));
  return 0;
}
"""

UNDEFINED_FN = """\
#include <stdio.h>
extern double unknown(double);
double __enzyme_fwddiff(void *, ...);

int main(void) {
  printf("%f\\n", __enzyme_fwddiff((void *)unknown, 1.0, 1.0));
  return 0;
}
"""

NULL_FN = """\
#include <stdio.h>
double __enzyme_fwddiff(void *, ...);

int main(void) {
  printf("%f\\n", __enzyme_fwddiff((void *)0, 1.0, 1.0));
  return 0;
}
"""

RUNTIME_FN = """\
#include <stdio.h>
double __enzyme_fwddiff(void *, ...);
extern void *choose_function(void);

int main(void) {
  printf("%f\\n", __enzyme_fwddiff(choose_function(), 1.0, 1.0));
  return 0;
}
"""

# __enzyme_set_fixed_point in a loop carrying a pointer from one iteration to the next (two
# buffers swapped): the step could not give the pointer's shadow to the next one, so the loop is
# refused by name
SET_FIXED_POINT = """\
#include <enzyme/fixed_point.h>
#include <math.h>
void __enzyme_autodiff(void *, ...);
static double loop(double p) {
  double a[1] = {0.5}, b[1] = {0.5};
  double *x = a, *y = b;
  for (int i = 0; i < 50; i++) {
    __enzyme_set_fixed_point(1e-20, (int64_t)-1, (void *)0, a, (int64_t)sizeof(a),
                             b, (int64_t)sizeof(b));
    y[0] = 0.5 * cos(x[0]) + p;
    double *t = x; x = y; y = t;
  }
  return x[0];
}
int main(void) {
  __enzyme_autodiff((void *)loop, 1.0);
  return 0;
}
"""

# __enzyme_set_fixed_point in a loop adding a loop value to a carried sum that reaches its result
# (acc = acc + x): the sum grows with the number of iterations and has no fixed point, so the
# loop is refused by name
SET_FIXED_POINT_SUM = """\
#include <enzyme/fixed_point.h>
#include <math.h>
void __enzyme_autodiff(void *, ...);
static double loop(double p) {
  double x[1] = {0.5}, acc = 0;
  for (int i = 0; i < 50; i++) {
    __enzyme_set_fixed_point(1e-20, (int64_t)-1, (void *)0, x, (int64_t)sizeof(x));
    acc = acc + x[0]; x[0] = 0.5 * cos(x[0]) + p;
  }
  return x[0] + acc;
}
int main(void) {
  __enzyme_autodiff((void *)loop, 1.0);
  return 0;
}
"""

# __enzyme_fixed_point with a state that the step neither takes nor reaches (it iterates the
# global w): the state has no shadow, so the adjoint iteration could not measure it
FIXED_POINT_STATE = """\
#include <enzyme/fixed_point.h>
#include <math.h>
void __enzyme_autodiff(void *, ...);
double w[1];
static int step(int64_t i, double *p) { double n = cos(*p * w[0]); int go = fabs(n - w[0]) > 1e-14; w[0] = n; return go; }
static double solve(double *p) {
  double z[1] = {0};
  __enzyme_fixed_point((void *)step, enzyme_fp_state, z, (int64_t)sizeof(z), p);
  return w[0];
}
int main(void) {
  double p = 0.5, dp = 0;
  __enzyme_autodiff((void *)solve, &p, &dp);
  return 0;
}
"""

REVERSE_WIDTH_HAZARD = """\
void __enzyme_autodiff(void *, ...);
int enzyme_width, enzyme_dup;
__attribute__((noinline)) static void keep(double **slot, double *x, double *y) {
  *slot = x;
  y[0] = x[0] * x[0];
}
int main(void) {
  double x = 2, y, *s, *ds[2], dx[2] = {0}, dy[2] = {1, 1};
  __enzyme_autodiff((void *)keep, enzyme_width, 2, enzyme_dup, &s, &ds[0], &ds[1],
                    enzyme_dup, &x, &dx[0], &dx[1], enzyme_dup, &y, &dy[0], &dy[1]);
  return (int)dx[0];
}
"""

# nested derivatives with contexts: differentiated code may only seed an inner context with
# constants (global_shadows_nested.py); reading its shadows back there would lose derivatives
GSHADOW_NESTED_READ = """\
extern void *__enzyme_context(int);
extern void *__enzyme_shadow(void *, void *, int);
extern double __enzyme_fwddiff(void *, ...);
extern double __enzyme_autodiff(void *, ...);
extern int enzyme_context;
double g = 2.0;
double cube(double x) { return g * x * x * x; }
double dcube_dg(double x) {
  void *inner = __enzyme_context(1);
  *(double *)__enzyme_shadow(inner, &g, 0) = 0.0;
  __enzyme_autodiff((void *)cube, enzyme_context, inner, x);
  return *(double *)__enzyme_shadow(inner, &g, 0);
}
int main(void) {
  void *outer = __enzyme_context(1);
  return __enzyme_fwddiff((void *)dcube_dg, enzyme_context, outer, 2.0, 1.0) != 12.0;
}
"""

# ... and a forward-mode inner derivative there must read seeds no other derivative wrote
GSHADOW_NESTED_REUSED = """\
extern void *__enzyme_context(int);
extern void *__enzyme_shadow(void *, void *, int);
extern double __enzyme_fwddiff(void *, ...);
extern int enzyme_context;
double g = 2.0;
double cube(double x) { g = g * x; return g * x * x; }
double twice(double x) {
  void *inner = __enzyme_context(1);
  *(double *)__enzyme_shadow(inner, &g, 0) = 1.0;
  return __enzyme_fwddiff((void *)cube, enzyme_context, inner, x, 0.0) + __enzyme_fwddiff((void *)cube, enzyme_context, inner, x, 0.0);
}
int main(void) {
  void *outer = __enzyme_context(1);
  return __enzyme_fwddiff((void *)twice, enzyme_context, outer, 2.0, 1.0) != 0.0;
}
"""

# vector forward mode with one shadow where N are needed (Enzyme's leaf-vectorized layout,
# ForwardModeVector/VectorizedAtLeafNodes): the next marker is never taken for a shadow
VECTOR_ONE_SHADOW = """\
int enzyme_width, enzyme_dup, enzyme_const;
typedef struct { double a, b; } T2;
T2 __enzyme_fwddiff2(void *, ...) __asm__("__enzyme_fwddiff");
double sumsq(const double *x, int n) { double s = 0; for (int i = 0; i < n; i++) s += x[i] * x[i]; return s; }
int main(void) {
  double x[2] = {1, 2}, dx[4] = {1, 0, 0, 1};
  T2 t = __enzyme_fwddiff2((void *)sumsq, enzyme_width, 2, enzyme_dup, x, dx, enzyme_const, 2);
  return t.a != 2.0;
}
"""

GSHADOW_LOCAL = """\
extern void *__enzyme_context(int);
extern void *__enzyme_shadow(void *, void *, int);
double g = 2.0;
int main(void) {
  double local[2] = {1.0, 2.0};
  void *ctx = __enzyme_context(1);
  double *d = __enzyme_shadow(ctx, local, 0);
  return d[0] != 0.0 || local[0] != 1.0;
}
"""

GSHADOW_WIDTH_REVERSE = """\
extern void *__enzyme_context(int);
extern double __enzyme_autodiff(void *, ...);
extern int enzyme_context;
double g = 2.0;
double scaled(double x) { return g * x; }
int main(void) {
  void *ctx = __enzyme_context(2);
  return __enzyme_autodiff((void *)scaled, enzyme_context, ctx, 1.0) != 2.0;
}
"""

GSHADOW_POINTER_STORE = """\
#include <stdlib.h>
extern void *__enzyme_context(int);
extern double __enzyme_autodiff(void *, ...);
extern int enzyme_context;
double *buf;
double fill(double x) {
  buf = malloc((x > 0 ? 2 : 3) * sizeof(double));   /* (not a fixed size globalopt folds) */
  buf[0] = x * x;
  return buf[0];
}
int main(void) {
  void *ctx = __enzyme_context(1);
  double d = __enzyme_autodiff((void *)fill, enzyme_context, ctx, 3.0);
  return d != 6.0 || buf[0] != 9.0;
}
"""

TODENSE_ESCAPES = """\
#include <stdint.h>
double *__enzyme_todense(void *, void *, ...);
static double unit(int64_t off, int64_t j) { return off / 8 == j; }
static void none(double v, int64_t off, int64_t j) {}
double *keep;

int main(int argc, char **argv) {
  double *p = __enzyme_todense((void *)unit, (void *)none, (int64_t)argc);
  keep = p;
  return keep[1] > 0;
}
"""

TODENSE_ARG_TYPES = """\
#include <stdint.h>
double *__enzyme_todense(void *, void *, ...);
static double unit(int64_t off, int64_t j) { return off / 8 == j; }
static void none(double v, int64_t off, int64_t j) {}

int main(int argc, char **argv) {
  double *p = __enzyme_todense((void *)unit, (void *)none, argc);
  return p[1] > 0;
}
"""

TODENSE_ACTIVE_INSIDE = """\
#include <stdint.h>
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double *__enzyme_todense(void *, void *, ...);
static double wrap_load(int64_t off, const double *x, int64_t n) { return x[(off / 8) % n]; }
static void wrap_store(double v, int64_t off, const double *x, int64_t n) {}
double ring(const double *x, int64_t n) {
  const double *v = __enzyme_todense((void *)wrap_load, (void *)wrap_store, x, n);
  double e = 0;
  for (int64_t i = 0; i < n; i++) e += (v[i + 1] - v[i]) * (v[i + 1] - v[i]);
  return e;
}
int main(void) {
  double x[3] = {1, 2, 4}, dx[3] = {0};
  __enzyme_autodiff((void *)ring, enzyme_dup, x, dx, enzyme_const, (int64_t)3);
  return dx[0] == 0;
}
"""

SRET_REVERSE = """\
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
struct big { double a, b, c, d; };
struct big make(double x) { struct big r = {x, x * x, 2 * x, 3}; return r; }

int main(void) {
  printf("%f\\n", __enzyme_autodiff((void *)make, 2.0));
  return 0;
}
"""

STRUCT_BY_VALUE = """\
#include <math.h>
#include <stdio.h>
typedef struct { double k, m, c, x0; } Osc;
double settle(Osc o, double t) { return o.x0 * exp(-o.c * t / (2 * o.m)) * cos(sqrt(o.k / o.m) * t); }
typedef struct { Osc d_o; double d_t; } Grad;
Grad __enzyme_autodiff(void *, Osc, double);
int main(void) {
  Osc o = {4.0, 1.0, 0.3, 1.0};
  Grad g = __enzyme_autodiff((void *)settle, o, 1.5);
  printf("%g %g\\n", g.d_o.k, g.d_t);
  return 0;
}
"""

SRET_FWD_SCALAR = """\
#include <stdio.h>
int enzyme_dup_return;
double __enzyme_fwddiff(void *, ...);
struct big { double a, b, c, d; };
struct big make(double x) { struct big r = {x, x * x, 2 * x, 3}; return r; }

int main(void) {
  printf("%f\\n", __enzyme_fwddiff((void *)make, enzyme_dup_return, 2.0, 1.0));
  return 0;
}
"""

# integer arithmetic on a vector of doubles' bits (not a sign change, which is rewritten as
# float operations): the derivative through it would be lost, so it is refused
FLOAT_BITS = """\
#include <emmintrin.h>
int enzyme_dup;
void __enzyme_autodiff(void *, ...);
__attribute__((noinline)) static double g(const double *x) {
  __m128i b = _mm_castpd_si128(_mm_loadu_pd(x) * _mm_loadu_pd(x + 2));
  __m128d c = _mm_castsi128_pd(_mm_add_epi64(b, _mm_shuffle_epi32(b, 0x4e)));
  double o[2];
  _mm_storeu_pd(o, c);
  return o[0] + o[1];
}
static double f(const double *x) { return g(x); }
int main(void) {
  double x[4] = {1, 2, 3, 4}, dx[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx);
  return dx[0] > 0;
}
"""

# a record of an int and a union of a double and a pointer returned by value comes back in two
# integer registers (`{ i32, i64 }`), through a function pointer that may reach a function
# returning the float in that field and one that never returns a float there: no one meaning
# for the field (a table whose every function returns the float in the same field, and such
# records returned directly, are differentiated: tests/modes/float_bits_records.c)
FLOAT_BITS_RETURNED = """\
#include <stdlib.h>
#include <math.h>
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
typedef struct { int ok; union { double value; char *message; } u; } U;
__attribute__((noinline)) static U attempt(double t) {
  U r;
  r.ok = 1;
  r.u.value = sqrt(t + 1.0) * t;
  return r;
}
__attribute__((noinline)) static U give_up(double t) {
  U r;
  r.ok = 0;
  r.u.message = malloc(4);
  r.u.message[0] = 0;
  return r;
}
U (*volatile strategy[2])(double) = {attempt, give_up};
double settle(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    U r = strategy[x[i] < -1.0](x[i]);
    if (r.ok) s += r.u.value * x[i]; else free(r.u.message);
  }
  return s;
}
int main(void) {
  double x[3] = {0.5, -2.0, 1.5}, dx[3] = {0};
  __enzyme_autodiff((void *)settle, enzyme_dup, x, dx, enzyme_const, 3);
  return dx[0] > 0;
}
"""

# a float's bits returned as an integer through a function pointer that may also reach a
# function returning a plain integer: no one meaning for the result (it was silently inactive, a
# zero gradient; a table whose every function returns the bits is differentiated:
# tests/modes/float_bits_indirect.c)
FLOAT_BITS_RETURNED_INDIRECT = """\
#include <string.h>
double __enzyme_autodiff(void *, ...);
typedef unsigned long long u64;
__attribute__((noinline)) u64 sq(double v) { u64 b; double w = v * v; memcpy(&b, &w, 8); return b; }
__attribute__((noinline)) u64 sign(double v) { return v > 0; }
u64 (*table[2])(double) = {sq, sign};
double f(double x, int k) {
  u64 b = table[k](x);
  double v;
  memcpy(&v, &b, 8);
  return v;
}
int main(void) { return __enzyme_autodiff((void *)f, 2.0, 1) > 0; }
"""

# a record of a float, an int and a union holding a double returned by value: the float shares
# the first integer register with the int (`{ i64, i64 }`, the float packed in the low half of
# field 0): refused where the record is built (a float whole in a field is differentiated)
FLOAT_PACKED_IN_RECORD = """\
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
typedef struct { float w; int k; union { double v; char *m; } u; } S;
__attribute__((noinline)) static S make(double x) {
  S s;
  s.w = (float)(x * x);
  s.k = 3;
  s.u.v = x * 3;
  return s;
}
double f(double x) { S s = make(x); return s.w + s.u.v; }
int main(void) { printf("%g\\n", __enzyme_autodiff((void *)f, 2.0)); return 0; }
"""

# one float's bits in the low half of a 64-bit integer on one path, in the high half on the
# other: the joined value has no one layout to take the derivative through
FLOAT_HALVES_JOINED = """\
#include <string.h>
double __enzyme_autodiff(void *, ...);
typedef unsigned long long u64;
__attribute__((noinline)) float low(u64 r) {
  unsigned lo = (unsigned)r;
  float f;
  memcpy(&f, &lo, 4);
  return f;
}
float halves(float x, int hi) {
  float y = x * x;
  unsigned b;
  memcpy(&b, &y, 4);
  u64 r = hi ? (u64)b << 32 : (u64)b;
  return low(r);
}
int main(void) { return __enzyme_autodiff((void *)halves, 1.5f, 0) > 0; }
"""

# a float's bits changed by integer arithmetic on the arm of a mode flag, the record's float
# read on the other arm and the result computed on as a double: bit manipulation of a float,
# refused, although the flag looks like a tagged union's tag (a payload computed on as an integer
# on its own arm and only stored is an integer variant: tests/modes/tagged_unions.c)
FLOAT_TRICK_UNDER_FLAG = """\
double __enzyme_autodiff(void *, ...);
int enzyme_dup;
typedef struct { int fast; union { double d; long i; } u; } R;
double inverse_root(R *r) {
  if (r->fast) {
    long i = r->u.i;
    i = 0x5fe6eb50c7b537a9 - (i >> 1);
    r->u.i = i;
  } else {
    r->u.d = 1.0 / r->u.d;
  }
  return r->u.d * 2;
}
int main(void) {
  R r = {1, {.d = 4.0}}, dr = {0};
  __enzyme_autodiff((void *)inverse_root, enzyme_dup, &r, &dr);
  return dr.u.d < 0;
}
"""

# the same trick in a function of its own that stores the bits back, its caller reading the
# double without looking at the flag: the magic constant says it is work on a float's bits,
# not an integer variant's arithmetic (which needs no constant of 2^32 or more)
FLOAT_TRICK_IN_PLACE = """\
double __enzyme_autodiff(void *, ...);
int enzyme_dup;
typedef struct { int fast; union { double d; long i; } u; } R;
__attribute__((noinline)) static void refine(R *r) {
  if (r->fast) r->u.i = 0x5fe6eb50c7b537a9 - (r->u.i >> 1);
  else r->u.d = 1.0 / r->u.d;
}
double inverse_root(R *r) {
  refine(r);
  return r->u.d * 2;
}
int main(void) {
  R r = {1, {.d = 4.0}}, dr = {0};
  __enzyme_autodiff((void *)inverse_root, enzyme_dup, &r, &dr);
  return dr.u.d < 0;
}
"""

# a float's bits packed into a 64-bit integer beside a tag whose bits may overlap them: no
# record layout says where the float is (a record of a float and an int packed in one register
# is differentiated: tests/modes/packed_records.cpp)
FLOAT_INT_RETURNED = """\
#include <string.h>
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
typedef unsigned long long u64;
__attribute__((noinline)) static u64 tagged(float d, u64 tag) {
  unsigned b;
  memcpy(&b, &d, 4);
  return tag | b;
}
float total(const float *p, u64 tag) {
  u64 t = tagged(p[0] * p[1], tag);
  unsigned b = (unsigned)t;
  float f;
  memcpy(&f, &b, 4);
  return f;
}
int main(void) {
  float p[2] = {0.5f, 2.0f}, dp[2] = {0};
  __enzyme_autodiff((void *)total, enzyme_dup, p, dp, enzyme_const, 1ull << 40);
  return dp[0] > 0;
}
"""

# a fast log2 reading the mantissa field as a number: a continuous function of x made of integer
# code, whose derivative would silently be zero (it was, before the refusal); the exponent field
# alone is piecewise constant and differentiated (tests/modes/float_exponent_field.c)
MANTISSA_AS_NUMBER = """\
#include <string.h>
double __enzyme_autodiff(void *, ...);
typedef unsigned long long u64;
double fastlog2(double x) {
  u64 b;
  memcpy(&b, &x, 8);
  double e = (double)(long)((b >> 52) & 0x7ff) - 1023;
  double m = (double)(b & 0xfffffffffffffULL) * 0x1p-52;
  return e + m * (1.3465553 - 0.34655532 * m);
}
double f(double x) { return fastlog2(x * x + 1.0); }
int main(void) { return __enzyme_autodiff((void *)f, 1.7) > 0; }
"""

CASES = {
    "reverse_width_lane_state": (REVERSE_WIDTH_HAZARD, ("main", "keep"),
                                 "__enzyme_autodiff((void *)keep"),
    "set_fixed_point_carried_pointer": (SET_FIXED_POINT, ("__enzyme_set_fixed_point", "loop"),
                                        "__enzyme_set_fixed_point(1e-20"),
    "set_fixed_point_accumulated_sum": (SET_FIXED_POINT_SUM, ("__enzyme_set_fixed_point",
                                                               "loop"),
                                        "__enzyme_set_fixed_point(1e-20"),
    "fixed_point_state_unreached": (FIXED_POINT_STATE, ("solve", "step"),
                                    "__enzyme_fixed_point((void *)step"),
    "global_shadow_pointer_store": (GSHADOW_POINTER_STORE, ("fill", "buf"), "buf = malloc("),
    "global_shadow_nested_read_back": (GSHADOW_NESTED_READ, ("dcube_dg",),
                                       "return *(double *)__enzyme_shadow(inner"),
    "global_shadow_nested_forward_reused": (GSHADOW_NESTED_REUSED, ("twice",),
                                            "return __enzyme_fwddiff((void *)cube"),
    "vector_one_shadow": (VECTOR_ONE_SHADOW, ("main", "sumsq"), "T2 t = __enzyme_fwddiff2"),
    "global_shadow_of_local": (GSHADOW_LOCAL, ("main",), "__enzyme_shadow(ctx, local"),
    "context_width_in_reverse": (GSHADOW_WIDTH_REVERSE, ("main",), "__enzyme_autodiff((void *)scaled"),
    "todense_pointer_stored": (TODENSE_ESCAPES, ("main",), "keep = p;"),
    "todense_active_inside_derivative": (TODENSE_ACTIVE_INSIDE, ("ring", "__enzyme_todense"),
                                         "const double *v = __enzyme_todense"),
    "todense_argument_types": (TODENSE_ARG_TYPES, ("main", "unit"), "__enzyme_todense((void *)unit"),
    "unknown_entry_point": (UNKNOWN_ENTRY, ("__enzyme_likelihood", "main"),
                            "__enzyme_likelihood((void *)g"),
    "error_estimate_no_bitcode": (ERREST_NO_BITCODE, ("unknown", "g"), "return unknown(in)"),
    "error_estimate_custom": (ERREST_CUSTOM, ("g", "myexp"), "return myexp(x) * 2"),
    # hints that do not say "declare it inactive", which would give a wrong derivative
    "thread_in_gradient": (THREAD_IN_GRADIENT, ("sumsq", "pthread_create"),
                           "pthread_create(&t, 0, work, &w);"),
    "custom_augment_return": (CUSTOM_AUG_RETURN, ("f", "dot", "dot_aug"),
                              "return dot(a, b, 3) * dot(a, a, 3)"),
    "custom_reverse_return": (CUSTOM_REV_RETURN, ("g", "mul", "mul_rev"),
                              "return mul(x, x + 1.0) + x"),
    "error_estimate_width": (ERREST_WIDTH, ("main",), "__enzyme_error_estimate((void *)sq"),
    "error_estimate_sincos": (ERREST_SINCOS, ("g", "sincos"), "sincos(x, &s, &c)"),
    "sincos_into_const_memory": (SINCOS_CONST_OUT, ("polar", "sincos"), "sincos(x, &out[0]"),
    "modf_long_double": (MODF_LONG_DOUBLE, ("frac", "llvm.modf.f80"), "return (double)modfl("),
    "error_estimate_long_double": (ERREST_LONG_DOUBLE, ("sq",), "return x * x"),
    "sret_reverse": (SRET_REVERSE, ("make", "main"), "__enzyme_autodiff((void *)make"),
    "struct_by_value": (STRUCT_BY_VALUE, ("settle", "main"), "__enzyme_autodiff((void *)settle"),
    "sret_forward_scalar_result": (SRET_FWD_SCALAR, ("make", "main"),
                                   "__enzyme_fwddiff((void *)make"),
    "undefined_function": (UNDEFINED_FN, ("unknown", "main"), "__enzyme_fwddiff((void *)unknown"),
    "null_function": (NULL_FN, ("null", "main"), "__enzyme_fwddiff((void *)0"),
    "runtime_function": (RUNTIME_FN, ("main",), "__enzyme_fwddiff(choose_function()"),
    "atomic_cmpxchg": (ATOMIC_DOUBLE, ("sum2",), "s += x[i] * 2"),
    "tape_too_small": (TAPE_TOO_SMALL, ("main",), "__enzyme_augmentfwd((void *)square"),
    "tape_in_autodiff": (TAPE_IN_AUTODIFF, ("main",), "__enzyme_autodiff((void *)sq"),
    "batch_without_width": (BATCH, ("main",), "__enzyme_batch((void *)sq"),
    "batch_result_too_small": (BATCH_RESULT, ("main", "sq"), "__enzyme_batch((void *)sq"),
    "batch_too_many_values": (BATCH_TOO_MANY, ("main", "sq"), "__enzyme_batch((void *)sq"),
    # name: (source, names that must appear, marker text locating the line)
    "external_no_bitcode": (EXTERNAL, ("uses_mystery", "mystery"), "return mystery(x)"),
    "marker_too_few_args": (TOO_FEW, ("two_args",), "__enzyme_autodiff((void *)two_args"),
    "enzyme_out_on_int": (OUT_ON_INT, ("scaled",), "__enzyme_autodiff((void *)scaled"),
    "const_pointer_in_records": (CONST_PTR_IN_RECORDS, ("weigh",), "v[i] = (R){"),
    "pointer_read_from_const_argument": (PTR_FROM_CONST_ARG, ("weigh",), "v[i] = (R){"),
    "const_in_expression": (CONST_IN_EXPRESSION, ("f",), "Expr e = {a, x};"),
    "float_bits_arithmetic": (FLOAT_BITS, ("g",), "_mm_add_epi64"),
    "variadic_store": (VARIADIC_STORE, ("scaled", "set_opts"), "set_opts(&o, 1, x * x)"),
    "float_bits_returned": (FLOAT_BITS_RETURNED, ("settle", "attempt"),
                            "U r = strategy[x[i] < -1.0](x[i])"),
    "float_int_record_returned": (FLOAT_INT_RETURNED, ("tagged",), "  return tag | b;"),
    "float_trick_under_flag": (FLOAT_TRICK_UNDER_FLAG, ("inverse_root",),
                               "i = 0x5fe6eb50c7b537a9 - (i >> 1);"),
    "float_trick_in_place": (FLOAT_TRICK_IN_PLACE, ("refine",),
                             "if (r->fast) r->u.i = 0x5fe6eb50c7b537a9 - (r->u.i >> 1);"),
    "float_packed_in_record": (FLOAT_PACKED_IN_RECORD, ("make",), "  return s;"),
    "float_halves_joined": (FLOAT_HALVES_JOINED, ("halves",), "u64 r = hi ? (u64)b << 32"),
    "float_bits_returned_indirect": (FLOAT_BITS_RETURNED_INDIRECT, ("f", "sq"),
                                     "u64 b = table[k](x)"),
    "mantissa_as_number": (MANTISSA_AS_NUMBER, ("f",), "double m = (double)(b & 0xfff"),
}

NO_HINT: dict = {}


# (case, flags) -> the link's result: test_error_names_function and test_error_has_hint make
# the same -O2 link of each case (a build is deterministic: one serves both)
_BUILT: dict = {}


def _build(tmp_path: Path, case: str, flags):
    key = (case, tuple(flags))
    if key not in _BUILT:
        _BUILT[key] = _link_case(tmp_path, case, flags)
    return _BUILT[key]


def _link_case(tmp_path: Path, case: str, flags):
    src_text, _, _ = CASES[case]
    src = tmp_path / f"{case}.c"
    src.write_text(src_text)
    inputs = [str(src)]
    if case == "external_no_bitcode":
        lib_c = tmp_path / "mystery.c"
        lib_c.write_text(MYSTERY_LIB)
        lib_o = tmp_path / "mystery.o"
        # plain clang: an ordinary object without any bitcode
        subprocess.run(["clang-22", "-O2", "-c", str(lib_c), "-o", str(lib_o)], check=True)
        inputs.append(str(lib_o))
    exe = tmp_path / f"{case}.out"
    env = dict(os.environ, PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""))
    env.pop("ENZYME_CC_DEBUG", None)
    r = subprocess.run([str(BIN / "enzyme-cc"), *flags, *inputs, "-o", str(exe)], cwd=tmp_path,
                       capture_output=True, text=True, env=env, timeout=120)
    return r, exe


def _line_of(case: str) -> int:
    src_text, _, marker = CASES[case]
    for k, line in enumerate(src_text.splitlines(), 1):
        if marker in line:
            return k
    raise AssertionError(marker)


def _assert_clean_error(r, exe, case):
    out = r.stdout + r.stderr
    assert r.returncode != 0, f"{case}: link succeeded:\n{out}"
    assert "Traceback" not in out, out
    assert "enzyme-cc: error:" in r.stderr, out
    assert "internal error" not in out, out
    assert not exe.exists(), f"{case}: an output file was left behind"
    for name in CASES[case][1]:
        assert f"'{name}'" in r.stderr, f"{case}: error does not name '{name}':\n{r.stderr}"


@pytest.mark.parametrize("level", ["-O0", "-O2"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_error_names_function(tmp_path, case, level):
    r, exe = _build(tmp_path, case, [level])
    _assert_clean_error(r, exe, case)


@pytest.mark.parametrize("case", [
    pytest.param(c, marks=[pytest.mark.xfail(strict=True, reason=NO_HINT[c])] if c in NO_HINT else [])
    for c in sorted(CASES)])
def test_error_has_hint(tmp_path, case):
    r, exe = _build(tmp_path, case, ["-O2"])
    _assert_clean_error(r, exe, case)
    assert "hint:" in r.stderr, f"{case}: no hint in:\n{r.stderr}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_error_with_g_names_source_line(tmp_path, case):
    r, exe = _build(tmp_path, case, ["-O2", "-g"])
    _assert_clean_error(r, exe, case)
    where = f"{case}.c:{_line_of(case)}"
    assert where in r.stderr, f"{case}: expected '{where}' in:\n{r.stderr}"


@pytest.mark.parametrize("case,words", [("thread_in_gradient", "OpenMP parallel regions")])
def test_no_rule_hint_fits_the_function(tmp_path, case, words):
    """For a library function that runs code elsewhere (a thread), the hint says what to do
    instead of declaring it inactive, which would give a wrong derivative (a new user did, for
    qsort, and 22 of 35 components were wrong; qsort has derivatives since: see
    test_qsort_of_the_differentiated_data)."""
    r, exe = _build(tmp_path, case, ["-O2"])
    _assert_clean_error(r, exe, case)
    hint = r.stderr.split("hint:", 1)[1]
    assert words in hint and "__enzyme_inactivefn" not in hint, r.stderr


def test_qsort_of_the_differentiated_data(tmp_path):
    """qsort of the array being differentiated (refused before: no rule): the adjoints move
    back with the elements (sorted 1, 2, 3 weighted 1, 2, 3: x[0] = 3 ends last, weight 3)."""
    (tmp_path / "q.c").write_text(QSORT_IN_GRADIENT.replace('printf("%g\\n", dx[0]);',
                                                            'printf("%g %g %g\\n", dx[0], '
                                                            'dx[1], dx[2]);'))
    subprocess.run([str(BIN / "enzyme-cc"), "-O2", "q.c", "-o", "q"], cwd=tmp_path, check=True)
    out = subprocess.run(["./q"], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout == "3 1 2\n"


def test_struct_by_value_says_pass_its_address(tmp_path):
    """A C struct given by value to the marker (the function takes it `byval`, in memory): the
    message says so and how to pass it, where it used to take the struct for a pointer and the
    next argument for its shadow ("too few arguments", "missing shadow")."""
    r, exe = _build(tmp_path, "struct_by_value", ["-O2"])
    _assert_clean_error(r, exe, "struct_by_value")
    assert "parameter 1 of 'settle' is a struct passed by value" in r.stderr, r.stderr
    assert "enzyme_dup, &s, &ds" in r.stderr.split("hint:")[1], r.stderr


def test_pointer_read_from_const_argument_names_it(tmp_path):
    """The pointer without a shadow came from an enzyme_const argument's memory: the message
    names that argument, and the hint is about passing it enzyme_dup."""
    r, exe = _build(tmp_path, "pointer_read_from_const_argument", ["-O2"])
    _assert_clean_error(r, exe, "pointer_read_from_const_argument")
    assert "read from the memory of argument 2 of 'weigh'" in r.stderr, r.stderr
    assert "enzyme_dup" in r.stderr.split("hint:")[1], r.stderr


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("call", ["return dot(&e);",
                                  "Expr *h = malloc(sizeof e); memcpy(h, &e, sizeof e); "
                                  "double r = dot(h); free(h); return r;",
                                  "struct { int tag; Expr e; } t = {1, e}; return dot(&t.e);"])
def test_const_pointer_in_expression_record(tmp_path, opt, call):
    """An enzyme_const vector's address kept in a local record beside an active pointer, and
    the record (or its copy on the heap, or inside another record) handed to a function kept
    out of line that reads the vector's data through it (refused before; the heap copy
    crashed): the callee knows that
    field has no shadow, so the vector's data is constant there. d/dx_i of sum d_i x_i^2 is
    2 d_i x_i."""
    src = CONST_IN_EXPRESSION.replace("  last_expr = e;\n", "") \
        .replace("return dot(&e);", call) \
        .replace("return dx[0] > 0 && last_expr != 0;", 'printf("%g %g %g\\n", dx[0], dx[1], '
                 'dx[2]); return 0;')
    (tmp_path / "e.c").write_text("#include <stdio.h>\n#include <stdlib.h>\n"
                                  "#include <string.h>\n" + src)
    subprocess.run([str(BIN / "enzyme-cc"), opt, "e.c", "-o", "e"], cwd=tmp_path, check=True,
                   timeout=300)
    out = subprocess.run(["./e"], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout == "2 4 6\n", out.stdout


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_const_pointer_in_expression_record_is_refused(tmp_path, opt):
    """The same record, which its reader also keeps in a global: which fields hold pointers
    without a shadow is not followed there, and the derivative would read and write the
    vector's adjoints through a null shadow (it crashed). The refusal names the argument and
    says to pass it enzyme_dup with a zeroed shadow."""
    r, exe = _build(tmp_path, "const_in_expression", [opt])
    _assert_clean_error(r, exe, "const_in_expression")
    assert "a pointer to double data without a shadow (argument 1 of 'f')" in r.stderr, r.stderr
    assert "enzyme_dup" in r.stderr.split("hint:")[1], r.stderr


# the record is handed to a constructor-like function that keeps its address in a block it
# returns (a holder), and another function reads the record back through the holder
CONST_IN_HOLDER = """\
#include <stdio.h>
#include <stdlib.h>
int enzyme_const, enzyme_dup;
void __enzyme_autodiff(void *, ...);
typedef struct { double *data; int n; } Vec;
typedef struct { const Vec *a; const double *x; double scale; } Expr;
typedef struct { int tag; const Expr *e; double w; } Holder;
Holder *last;
__attribute__((noinline)) Holder *hold(const Expr *e, double w) {
  Holder *h = malloc(sizeof *h);
  h->tag = 7; h->e = e; h->w = w;
  return h;
}
__attribute__((noinline)) double term(const Expr *e, int i) {
  return e->a->data[i] * e->x[i] * e->x[i] * e->scale;
}
__attribute__((noinline)) double dot(const Holder *h) {
  double s = 0;
  for (int i = 0; i < h->e->a->n; i++) s += term(h->e, i) * h->w;
  return s;
}
__attribute__((noinline)) double g(const Vec *a, const double *x, double scale) {
  Expr e = {a, x, scale};
  Holder *h = hold(&e, 0.5);
  double r = dot(h) + h->e->x[0];
  free(h);
  return r;
}
__attribute__((noinline)) double f(const Vec *a, const double *x) { return g(a, x, 3.0) * x[1]; }
int main(void) {
  double d[3] = {1, 2, 3}, x[3] = {1, 2, 0.5}, dx[3] = {0};
  Vec a = {d, 3};
  __enzyme_autodiff((void *)f, enzyme_const, &a, enzyme_dup, x, dx);
  double s = 0;
  for (int i = 0; i < 3; i++) s += d[i] * x[i] * x[i];
  /* f = (1.5 sum_i d_i x_i^2 + x_0) x_1 */
  double want[3] = {(3 * d[0] * x[0] + 1) * x[1], 3 * d[1] * x[1] * x[1] + 1.5 * s + x[0],
                    3 * d[2] * x[2] * x[1]};
  for (int i = 0; i < 3; i++) printf("%.12g %.12g\\n", dx[i], want[i]);
  return 0;
}
"""


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_const_pointer_record_kept_in_returned_holder(tmp_path, opt):
    """The record (an enzyme_const vector's address beside an active pointer) handed to a
    function that keeps its address in a block it allocates and returns, which another
    function reads the record back from: the holder is a record one level deeper, and the
    reader knows the field has no shadow (it crashed before). Analytic gradient."""
    (tmp_path / "h.c").write_text(CONST_IN_HOLDER)
    subprocess.run([str(BIN / "enzyme-cc"), opt, "h.c", "-o", "h"], cwd=tmp_path, check=True,
                   timeout=300)
    out = subprocess.run(["./h"], cwd=tmp_path, capture_output=True, text=True, check=True)
    rows = [[float(t) for t in line.split()] for line in out.stdout.splitlines()]
    assert len(rows) == 3 and all(abs(a - b) <= 1e-12 * abs(b) for a, b in rows), out.stdout


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_const_pointer_record_in_global_holder_is_refused(tmp_path, opt):
    """The same holder also kept in a global: its readers are out of sight, and the derivative
    would read the vector through the null shadow of its field (it crashed): refused, naming
    the function that keeps the record's address and the argument to pass enzyme_dup."""
    (tmp_path / "h.c").write_text(CONST_IN_HOLDER.replace("return h;\n}", "last = h;\n  return h;\n}"))
    r = subprocess.run([str(BIN / "enzyme-cc"), opt, "h.c", "-o", "h"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and not (tmp_path / "h").exists(), r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    assert "a pointer without a shadow (argument 1 of 'g') is stored into a record that has " \
        "one, and 'hold' keeps the record's address in memory whose readers cannot be " \
        "followed" in r.stderr, r.stderr
    assert "enzyme_dup" in r.stderr.split("hint:")[1], r.stderr


VALARRAY_FIT = r"""
#include <cstdio>
#include <valarray>
extern "C" { extern int enzyme_dup, enzyme_const; void __enzyme_autodiff(void *, ...); }
struct Data { std::valarray<double> t, y; };
double misfit(const double *p, const Data *d) {
  std::valarray<double> model = p[0] * d->t + p[1];
  std::valarray<double> r = model - d->y;
  return (r * r).sum();
}
int main() {
  Data d{{0.0, 1.0, 2.0, 3.0}, {1.0, 2.5, 2.0, 4.5}};
  double p[2] = {0.7, 0.2}, dp[2] = {0, 0}, want[2] = {0, 0};
  __enzyme_autodiff((void *)misfit, enzyme_dup, p, dp, enzyme_const, &d);
  for (int i = 0; i < 4; i++) {
    double r = p[0] * d.t[i] + p[1] - d.y[i];
    want[0] += 2 * r * d.t[i];
    want[1] += 2 * r;
  }
  std::printf("%.15g %.15g %.15g %.15g\n", dp[0], want[0], dp[1], want[1]);
}
"""


@pytest.mark.parametrize("flags", [["-O2"], ["-O0"], ["-O2", "-fno-inline"]])
def test_valarray_expression_over_const_data(tmp_path, flags):
    """std::valarray's expression templates over a valarray of a constant record beside an
    active one: right where the expression objects are inlined (analytic gradient of a
    least-squares misfit); under -fno-inline their constructors store the constant valarray's
    address out of line, where nothing tells its readers that it has no shadow: refused,
    naming the constructor (it crashed before)."""
    (tmp_path / "v.cpp").write_text(VALARRAY_FIT)
    r = subprocess.run([str(BIN / "enzyme-c++"), *flags, "v.cpp", "-o", "v"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    if "-fno-inline" in flags:
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        assert "_BinBase" in r.stderr and "a pointer to double data without a shadow" in \
            r.stderr and "enzyme_dup" in r.stderr.split("hint:")[1], r.stderr
        return
    assert r.returncode == 0, r.stderr
    out = subprocess.run(["./v"], cwd=tmp_path, capture_output=True, text=True, check=True)
    got, want0, got1, want1 = (float(t) for t in out.stdout.split())
    assert got == pytest.approx(want0, rel=1e-13) and got1 == pytest.approx(want1, rel=1e-13), \
        out.stdout


POLY_CONST_POINTER = r"""
#include <cstdio>
#include <memory>
#include <vector>
extern "C" { int enzyme_dup, enzyme_const; void __enzyme_autodiff(void *, ...); }
struct Term { virtual ~Term() = default; virtual double f(const double *x) const = 0; };
struct Weighted : Term {          // keeps the address of constant data
  const double *w;
  explicit Weighted(const double *w) : w(w) {}
  double f(const double *x) const override { return w[0] * x[0] * x[0]; }
};
struct Copied : Term {            // keeps a copy of it
  double c;
  explicit Copied(const double *w) : c(w[1]) {}
  double f(const double *x) const override { return c * x[1] * x[1]; }
};
double loss(const double *x, const double *w) {
  std::vector<std::unique_ptr<Term>> terms;
  terms.push_back(std::make_unique<Copied>(w));
  if (WEIGHTED) terms.push_back(std::make_unique<Weighted>(w));
  double s = 0;
  for (auto &t : terms) s += t->f(x);
  return s;
}
int main() {
  double x[2] = {0.5, 1.5}, dx[2] = {0, 0}, w[2] = {2.0, 3.0};
  __enzyme_autodiff((void *)loss, enzyme_dup, x, dx, enzyme_const, w);
  std::printf("%.15g %.15g\n", dx[0], dx[1]);
}
"""


@pytest.mark.parametrize("flags", [["-O2"], ["-O2", "-fno-inline"], ["-O0", "-fno-inline"]])
@pytest.mark.parametrize("weighted", [0, 1])
def test_unique_ptr_objects_holding_constants(tmp_path, flags, weighted):
    """A vector of unique_ptrs to polymorphic objects built inside the derivative from
    enzyme_const data. Objects keeping a copy of it: right (analytic), also where push_back's
    moves stay out of line (they got no shadow and the virtual calls read a null shadow
    `this`: a segfault under -fno-inline). An object keeping the constant data's address:
    refused at every level, naming the store (under -fno-inline it crashed)."""
    (tmp_path / "p.cpp").write_text(POLY_CONST_POINTER.replace("WEIGHTED", str(weighted)))
    r = subprocess.run([str(BIN / "enzyme-c++"), *flags, "p.cpp", "-o", "p"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    if weighted:
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        assert "a pointer to double data without a shadow" in r.stderr and \
            "enzyme_dup" in r.stderr.split("hint:")[1], r.stderr
        return
    assert r.returncode == 0, r.stderr
    out = subprocess.run(["./p"], cwd=tmp_path, capture_output=True, text=True, check=True)
    dx0, dx1 = (float(t) for t in out.stdout.split())
    assert dx0 == 0.0 and dx1 == pytest.approx(2 * 3.0 * 1.5, rel=1e-15), out.stdout


def test_refusal_in_code_without_debug_info_names_no_inlined_library_line(tmp_path):
    """A refused store in a function compiled without -g, in a block holding code inlined from a
    library built with -g: the message used to give the library's source line (GSL's driver.c
    for a store in the user's own function); it asks for -g instead."""
    (tmp_path / "lib.c").write_text("double scaled(double s) { return 2.0 * s + 1.0; }\n")
    (tmp_path / "h.c").write_text(
        CONST_IN_HOLDER.replace("return h;\n}", "last = h;\n  return h;\n}")
        .replace("  Expr e = {a, x, scale};", "  Expr e = {a, x, scaled(scale)};")
        .replace("Holder *last;", "Holder *last;\ndouble scaled(double);"))
    run = lambda *a: subprocess.run([str(BIN / "enzyme-cc"), *a], cwd=tmp_path,
                                    capture_output=True, text=True, timeout=300)
    assert run("-O2", "-g", "-c", "lib.c", "-o", "lib.o").returncode == 0
    r = run("-O2", "h.c", "lib.o", "-o", "h")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "in function 'g'" in r.stderr and "lib.c" not in r.stderr, r.stderr
    assert "(compile with -g for the source line)" in r.stderr, r.stderr


def test_float_bits_returned_say_so(tmp_path):
    """Float bits returned in integer registers: both refusals say it is the return."""
    r, exe = _build(tmp_path, "float_bits_returned", ["-O2"])
    _assert_clean_error(r, exe, "float_bits_returned")
    assert "returns a float's bits among other data in integers ('{ i32, i64 }'" in r.stderr, \
        r.stderr
    assert "through a function pointer whose possible targets return them differently" in \
        r.stderr, r.stderr
    r, exe = _build(tmp_path, "float_bits_returned_indirect", ["-O0"])
    _assert_clean_error(r, exe, "float_bits_returned_indirect")
    assert "which this indirect call may reach, returns a float's bits in an integer, and " \
        "'sign', which it may reach too, does not" in r.stderr, r.stderr
    r, exe = _build(tmp_path, "float_int_record_returned", ["-O0"])
    _assert_clean_error(r, exe, "float_int_record_returned")
    assert "returns a float's bits packed with other data" in r.stderr, r.stderr


def test_variadic_refusal_names_the_store(tmp_path):
    """The refusal of a variadic callee says what in it needs a derivative: the store of a
    variadic double into the caller's record, with its source line."""
    r, exe = _build(tmp_path, "variadic_store", ["-O2", "-g"])
    _assert_clean_error(r, exe, "variadic_store")
    assert "writes memory outside its stack frame (variadic_store.c:6" in r.stderr, r.stderr
    assert "store double" in r.stderr and "__enzyme_inactivefn" in r.stderr, r.stderr


def test_marker_on_parameter_in_shared_library_is_refused(tmp_path):
    """In a shared library, a marker whose function is a parameter of an exported function is
    given its function by callers outside the library: refused at build time (in an
    executable, the callers are all known: tests/ad_programs/function_pointer_helper.c)."""
    src = tmp_path / "lib.c"
    src.write_text("double __enzyme_autodiff(void *, ...);\n"
                   "double slope(double (*f)(double), double x) {\n"
                   "  return __enzyme_autodiff((void *)f, x);\n}\n")
    env = dict(os.environ, PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""))
    out = tmp_path / "libslope.so"
    r = subprocess.run([str(BIN / "enzyme-cc"), "-O2", "-g", "-fPIC", "-shared", str(src), "-o",
                        str(out)], cwd=tmp_path, capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 1 and not out.exists(), r.stderr
    assert "lib.c:3" in r.stderr and "in function 'slope'" in r.stderr, r.stderr
    assert "must be a function known at compile time" in r.stderr, r.stderr


def test_function_from_a_shared_library_names_it(tmp_path):
    """A marker's function defined in a shared library on the command line (built with
    enzyme-cc, as a new user did): the message names the library and says to link it
    statically, where it said to build the function with enzyme-cc."""
    (tmp_path / "lib.c").write_text("double sq(double x) { return x * x; }\n")
    (tmp_path / "main.c").write_text(
        "double sq(double);\ndouble __enzyme_autodiff(void *, double);\n"
        "int main(void) { return __enzyme_autodiff((void *)sq, 3.0) == 6.0 ? 0 : 1; }\n")
    env = dict(os.environ, PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""))
    kw = dict(cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    r = subprocess.run([str(BIN / "enzyme-cc"), "-O2", "-fPIC", "-shared", "lib.c", "-o",
                        "libsq.so"], **kw)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(BIN / "enzyme-cc"), "-O2", "main.c", "-L.", "-lsq", "-o", "r"], **kw)
    assert r.returncode == 1, r.stderr
    assert "'sq' is defined in the shared library './libsq.so'" in r.stderr, r.stderr
    assert "link that library statically" in r.stderr.split("hint:")[1], r.stderr
    assert r.stderr.count("hint:") == 1, r.stderr


def test_external_error_says_which_object(tmp_path):
    """The object without bitcode that defines the callee is named, so the user knows what to
    rebuild."""
    r, exe = _build(tmp_path, "external_no_bitcode", ["-O2"])
    _assert_clean_error(r, exe, "external_no_bitcode")
    assert "mystery.o" in r.stderr, r.stderr


def test_without_g_suggests_g(tmp_path):
    r, exe = _build(tmp_path, "external_no_bitcode", ["-O2"])
    _assert_clean_error(r, exe, "external_no_bitcode")
    assert "-g" in r.stderr, r.stderr


MARKER_IN_GLOBAL = """\
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
double sq(double x) { return x * x; }
double (*volatile grad)(void *, ...) = __enzyme_autodiff;
int main(void) {
  printf("%f\\n", grad((void *)sq, 3.0));
  return 0;
}
"""

MARKER_IN_VOLATILE_LOCAL = """\
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
double sq(double x) { return x * x; }
int main(void) {
  double (*volatile grad)(void *, ...) = __enzyme_autodiff;
  printf("%f\\n", grad((void *)sq, 3.0));
  return 0;
}
"""

MARKER_IN_LOCAL = MARKER_IN_VOLATILE_LOCAL.replace("(*volatile grad)", "(*grad)")


@pytest.mark.parametrize("level", ["-O0", "-O2"])
@pytest.mark.parametrize("src,where", [(MARKER_IN_GLOBAL, "global 'grad'"),
                                       (MARKER_IN_VOLATILE_LOCAL, "m.c:5:")])
def test_marker_used_as_value(tmp_path, src, where, level):
    """A marker kept in a function pointer the optimizer cannot turn into a direct call was an
    undefined symbol at link time; now an error that says what to do (with -g, the line)."""
    (tmp_path / "m.c").write_text(src)
    exe = tmp_path / "m"
    r = subprocess.run([str(BIN / "enzyme-cc"), level, "-g", "m.c", "-o", str(exe)], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and not exe.exists(), r.stderr
    assert "Traceback" not in r.stderr and "undefined reference" not in r.stderr, r.stderr
    assert "'__enzyme_autodiff' is used as a value" in r.stderr and where in r.stderr, r.stderr
    assert "hint: call it directly" in r.stderr, r.stderr


@pytest.mark.parametrize("debug", [[], ["-g"]], ids=["", "g"])
@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_marker_through_local_pointer(tmp_path, level, debug):
    """A marker called through a plain local function pointer: its holder is optimized before
    AD (lto/preopt_scope.py), which makes the call direct, as with clang -O2 under Enzyme.
    With -g (CMake's Debug builds) the variable's debug record kept the marker's address and
    the link was refused as a marker used as a value."""
    (tmp_path / "m.c").write_text(MARKER_IN_LOCAL)
    r = subprocess.run([str(BIN / "enzyme-cc"), level, *debug, "m.c", "-o", "m"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = subprocess.run(["./m"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert float(out.stdout) == 6.0, out.stdout         # d(x^2)/dx at 3


def test_invalid_derivative_ir_names_the_primal_and_the_sweep():
    """An internal error (derivative IR that does not verify: a bug of ours) names the primal
    function the failing generated function derives from, which sweep it is, and the primal's
    source line, so that a report says where to look."""
    from enzyme_cc.ad.structure.diagnostics import generated_origin
    text = "\n".join([
        'define void @step(ptr %x) !dbg !5 {', '  ret void', '}',
        'define void @rev.step.3(ptr %x, ptr %dx) {', '  %a = fadd double %t, 1.0',
        '  ret void', '}',
        '!5 = distinct !DISubprogram(name: "step", file: !6, line: 42)',
        '!6 = !DIFile(filename: "hydro.c", directory: "/src")'])
    msg = "LLVM IR parsing error\n<string>:5:18: error: use of undefined value '%t'"
    assert generated_origin(text, msg) == \
        " in the reverse sweep of 'step' (generated function 'rev.step.3', from hydro.c:42)"
    assert generated_origin(text, "no line number") == ""
    verifier = "PHINode should have one entry for each predecessor!\n  %a = fadd double %t, 1.0"
    assert generated_origin(text, verifier).startswith(" in the reverse sweep of 'step'")


def test_locations_of_every_kind_format_without_crashing():
    """Every kind of place an error can point at formats: an instruction with and without a
    debug location (one without takes its block's nearest, as a select LLVM made by merging two
    located stores; else its function's line), a function argument (no metadata at all) with
    and without the function's DISubprogram, and no place (a global, the function as a
    whole)."""
    from enzyme_cc.ad.structure.diagnostics import located
    from enzyme_cc.ir.model import parse_module
    text = "\n".join([
        'define void @g(ptr %p) !dbg !5 {', '  store double 1.0, ptr %p, !dbg !7',
        '  store double 2.0, ptr %p', '  ret void', '}',
        'define void @h(ptr %q) {', '  store double 2.0, ptr %q', '  ret void', '}',
        'define void @k(ptr %q) !dbg !5 {', '  store double 2.0, ptr %q', '  ret void', '}',
        '!5 = distinct !DISubprogram(name: "g", file: !6, line: 3)',
        '!6 = !DIFile(filename: "lib.c", directory: "/src")',
        '!7 = !DILocation(line: 4, column: 9, scope: !5)'])
    m = parse_module(text)
    g, h = m.function("@g"), m.function("@h")
    with_dbg, without = g.blocks[0].insts[:2]
    assert located(m, g, with_dbg).startswith("lib.c:4:9: in function 'g', instruction 'store")
    assert located(m, g, without).startswith("lib.c:4:9: in function 'g', instruction 'store")
    k = m.function("@k")
    assert located(m, k, k.blocks[0].insts[0]).startswith("lib.c:3: in function 'k'")
    assert located(m, h, h.blocks[0].insts[0]).endswith("(compile with -g for the source line)")
    assert located(m, g, g.params[0]) == "lib.c:3: in function 'g', argument '%p'"
    assert located(m, h, h.params[0]) == \
        "in function 'h', argument '%q' (compile with -g for the source line)"
    assert located(m, h, None) == "in function 'h' (compile with -g for the source line)"


INDIRECT_NO_TARGET = r"""
#include <stdio.h>
#include <math.h>
typedef int (*adjust_fn)(void *state, double *y, double *h);
typedef struct { adjust_fn adjust; void *state; } Control;
extern Control *gcon;                 /* set in an object without bitcode */
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
__attribute__((noinline)) double step(double *y, Control *con, int n) {
  double h = 0.1;
  for (int i = 0; i < n; i++) {
    y[0] = y[0] + h * sin(y[1]);
    if (con) con->adjust(con->state, y, &h);
  }
  return y[0] * y[1];
}
double loss(double *y, int n) { return step(y, gcon, n); }
int main(void) {
  double y[2] = {0.3, 0.7}, dy[2] = {0, 0};
  __enzyme_autodiff((void *)loss, enzyme_dup, y, dy, enzyme_const, 5);
  printf("%g %g\n", dy[0], dy[1]);
  return 0;
}
"""
INDIRECT_LIB = r"""
typedef int (*adjust_fn)(void *state, double *y, double *h);
typedef struct { adjust_fn adjust; void *state; } Control;
static int lib_adjust(void *state, double *y, double *h) { *h *= 0.9 + 0 * y[0]; return 0; }
static Control c = {lib_adjust, 0};
Control *gcon = &c;
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_indirect_call_without_any_target_aborts_when_it_runs(tmp_path, level):
    """An indirect call whose type no function with bitcode has builds (the call may sit on a
    path that never runs: tests/ad_programs/indirect_call_no_target.c); when it does run, to a
    function of an object without bitcode, the derivative stops with a message instead of
    computing without that call's derivative."""
    (tmp_path / "main.c").write_text(INDIRECT_NO_TARGET)
    (tmp_path / "lib.c").write_text(INDIRECT_LIB)
    subprocess.run(["clang-22", "-O2", "-c", "lib.c", "-o", "lib.o"], cwd=tmp_path, check=True)
    env = dict(os.environ, PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""))
    r = subprocess.run([str(BIN / "enzyme-cc"), level, "main.c", "lib.o", "-lm", "-o", "prog"],
                       cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    run = subprocess.run(["./prog"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert run.returncode != 0 and run.stdout == "", run.stdout
    assert "a differentiated indirect call reached a function without a derivative" in run.stderr
    assert "build its object with enzyme-cc" in run.stderr


UNDERIVABLE_TARGET = r"""
#include <stdio.h>
extern int enzyme_const;
double __enzyme_autodiff(void *, ...);
typedef double (*op_fn)(double);
static double square(double x) { return x * x; }
static double opaque(double x) { double r; __asm__("" : "=x"(r) : "0"(x)); return 3 * r; }
op_fn table[2] = {square, opaque};
double f(double x, int w) { return table[w](x); }
int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  printf("%g\n", __enzyme_autodiff((void *)f, 3.0, enzyme_const, 0));
  printf("%g\n", __enzyme_autodiff((void *)f, 3.0, enzyme_const, 1));
  return 0;
}
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_indirect_call_to_a_target_without_derivative_names_it(tmp_path, level):
    """A table may hold a function that cannot be differentiated (here an inline asm) while the
    differentiated path calls another: the program builds and the other's gradient is right;
    when the derivative does reach that one, it stops with its name and the build's reason
    (before, the generic no-bitcode message blamed the build)."""
    (tmp_path / "t.c").write_text(UNDERIVABLE_TARGET)
    r = subprocess.run([str(BIN / "enzyme-cc"), level, "t.c", "-o", "prog"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    run = subprocess.run(["./prog"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert run.returncode != 0 and run.stdout == "6\n", run.stdout
    assert "a differentiated indirect call reached 'opaque', which could not be differentiated: " \
           "in function 'opaque'" in run.stderr, run.stderr


def test_marker_call_in_an_object_without_bitcode_is_named(tmp_path):
    """The object calling the marker compiled by plain clang (a Makefile without CC=enzyme-cc):
    nothing defines the marker, and ld's undefined reference was all the user saw; the error
    names the object and says to compile it with enzyme-cc."""
    (tmp_path / "main.c").write_text("double f(double);\ndouble __enzyme_autodiff(void *, ...);\n"
                                     "int main(void) { return __enzyme_autodiff((void *)f, 1.0) "
                                     "!= 2; }\n")
    (tmp_path / "f.c").write_text("double f(double x) { return x * x; }\n")
    subprocess.run(["clang-22", "-O2", "-c", "main.c"], cwd=tmp_path, check=True)
    subprocess.run([str(BIN / "enzyme-cc"), "-O2", "-c", "f.c"], cwd=tmp_path, check=True)
    r = subprocess.run([str(BIN / "enzyme-cc"), "main.o", "f.o", "-o", "app"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "main.o calls __enzyme_autodiff but holds no bitcode" in \
        r.stderr and "undefined reference" not in r.stderr, r.stderr


MANGLED = """\
namespace phys {
double opaque(double x);
double energy(double x) { return opaque(x) * x; }
}
extern "C" double __enzyme_autodiff(void *, double);
int main() { return (int)__enzyme_autodiff((void *)phys::energy, 1.0); }
"""


def test_cxx_names_are_demangled(tmp_path):
    """A C++ function is named as in the source, with its symbol after it."""
    (tmp_path / "m.cpp").write_text(MANGLED)
    (tmp_path / "o.cpp").write_text("namespace phys { double opaque(double x) { return x; } }\n")
    subprocess.run(["clang++-22", "-O2", "-c", "o.cpp", "-o", "o.o"], cwd=tmp_path, check=True)
    r = subprocess.run([str(BIN / "enzyme-c++"), "-O2", "m.cpp", "o.o", "-o", "m"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "in function 'phys::energy(double)' (symbol _ZN4phys6energyEd)" in r.stderr, r.stderr
    assert "call to 'phys::opaque(double)' (symbol _ZN4phys6opaqueEd)" in r.stderr, r.stderr
    assert "comes from 'o.o', which was not built with enzyme-cc" in r.stderr, r.stderr


PUSHBACK_MIXED = r"""
#include <vector>
double __enzyme_autodiff(void *, ...);
extern int enzyme_dup, enzyme_const;
struct Csr { std::vector<int> col; std::vector<double> val; };
double f(const double *v, int n) {
  Csr A;
  for (int i = 0; i < n; ++i)
    if (i % 3 != 1) { A.col.push_back(i); A.val.push_back(v[i]); }
  double s = 0;
  for (unsigned k = 0; k < A.val.size(); ++k) s += A.val[k] * A.val[k] * A.col[k];
  return s;
}
#include <cstdio>
int main() { double v[10], dv[10] = {0};
  for (int i = 0; i < 10; i++) v[i] = 1 + 0.5 * i;
  __enzyme_autodiff((void *)f, enzyme_dup, v, dv, enzyme_const, 10);
  for (int i = 0; i < 10; i++) std::printf("%.15g ", dv[i]);
  return 0; }
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_pushback_of_int_and_double_vectors_in_one_struct(tmp_path, level):
    """A struct of a vector<int> and a vector<double> grown by push_back (libstdc++ moves the
    int elements with a memmove that nothing types at a known offset): refused before ("cannot
    deduce the type of the memory being copied"), now typed by the int vector's TBAA-tagged
    stores (typeinfo.int_class): d/dv_i of sum v_i^2 i over the kept i is 2 v_i i."""
    (tmp_path / "p.cpp").write_text(PUSHBACK_MIXED)
    r = subprocess.run([str(BIN / "enzyme-c++"), level, "p.cpp", "-o", "p"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = [float(t) for t in subprocess.run(["./p"], cwd=tmp_path, capture_output=True,
                                            text=True, check=True).stdout.split()]
    want = [0.0 if i % 3 == 1 else 2 * (1 + 0.5 * i) * i for i in range(10)]
    assert got == pytest.approx(want, rel=1e-12), got


EXCEPTION_TAKEN = r"""
#include <cstdio>
#include <stdexcept>
extern "C" { double __enzyme_autodiff(void *, ...); double __enzyme_fwddiff(void *, ...); }
double f(double x) {
  try { if (x < 0) throw std::invalid_argument("negative"); return x * x * x; }
  catch (const std::exception &) { return -x; }
}
double df(double x) { return __enzyme_autodiff((void *)f, x); }
int main(int argc, char **argv) {
  std::printf("%g %g\n", df(2.0), __enzyme_fwddiff((void *)df, 2.0, 1.0));   // 12 12
  std::printf("%g\n", f(-2.0));                                              // 2: caught
  std::printf("%g\n", df(argc > 1 ? -2.0 : 2.0));           // throws inside the derivative
}
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_exception_in_a_derivative_stops_with_a_message(tmp_path, level):
    """A C++ exception thrown on a taken path while a derivative runs (derivatives do not
    unwind): the program stops with a message naming the derivative, where it called
    std::terminate with no word of why; paths that do not throw, and a second-order
    derivative of the same code, are exact."""
    (tmp_path / "p.cpp").write_text(EXCEPTION_TAKEN)
    subprocess.run(["enzyme-c++", level, "p.cpp", "-o", "p"], cwd=tmp_path, check=True)
    r = subprocess.run(["./p"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.split() == ["12", "12", "2", "12"], r.stdout
    r = subprocess.run(["./p", "throw"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode != 0
    assert "a C++ exception was thrown while the derivative of 'f(double)' ran" in r.stderr
    assert "hint:" in r.stderr


HESSIAN_COLUMNS_THROWING = r"""
#include <cmath>
#include <cstdio>
#include <stdexcept>
extern int enzyme_dup;
double __enzyme_fwddiff(void *, ...);
void __enzyme_autodiff(void *, ...);
double f(const double *x) {
  if (x[0] <= 0.0) throw std::domain_error("x[0] must be positive");
  return std::log(x[0]) * x[1];
}
static void grad(const double *x, double *g) {
  g[0] = g[1] = 0;
  __enzyme_autodiff((void *)f, enzyme_dup, x, g);
}
int main() {
  double x[2] = {2.0, 3.0}, v[2] = {1.0, 0.0}, w[2] = {0.0, 1.0}, g[2], hv[2], hw[2];
  __enzyme_fwddiff((void *)grad, enzyme_dup, x, v, enzyme_dup, g, hv);
  __enzyme_fwddiff((void *)grad, enzyme_dup, x, w, enzyme_dup, g, hw);
  std::printf("%g %g %g %g\n", hv[0], hv[1], hw[0], hw[1]);
}
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_two_guarded_marker_calls_in_one_caller(tmp_path, level):
    """Two forward-over-reverse marker calls in one function of a program that throws: each
    runs under the terminate handler, whose saved value had the same name twice (an internal
    error: the derivative IR did not verify; found by a new-user check on a Newton-CG solver).
    The Hessian of log(x0) x1 at (2, 3): [-3/4, 1/2; 1/2, 0]."""
    (tmp_path / "h.cpp").write_text(HESSIAN_COLUMNS_THROWING)
    subprocess.run(["enzyme-c++", level, "h.cpp", "-o", "h"], cwd=tmp_path, check=True)
    r = subprocess.run(["./h"], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert [float(v) for v in r.stdout.split()] == [-0.75, 0.5, 0.5, 0.0], r.stdout


MAP_COPY = r"""
#include <cstdio>
#include <map>
#include <unordered_map>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double objective(const double *p, int n) {
  MAP<int, double> a;
  for (int s = 0; s < n; s++) a[s] = p[s];
#ifdef BY_INSERTION
  MAP<int, double> b;
  for (auto &kv : a) b[kv.first] = kv.second;
#else
  MAP<int, double> b = a;
#endif
  double e = 0;
  for (const auto &kv : b) e += kv.second * kv.second;
  return e;
}
int main() {
  double p[3] = {1.0, 2.0, 3.0}, dp[3] = {0, 0, 0};
  __enzyme_autodiff((void *)objective, enzyme_dup, p, dp, enzyme_const, 3);
  std::printf("%g %g %g\n", dp[0], dp[1], dp[2]);
}
"""


@pytest.mark.parametrize("kind", ["std::map", "std::unordered_map"])
def test_node_container_copy_refused_not_wrong(tmp_path, kind):
    """Copying a std::map / std::unordered_map of doubles: the node values' copies were typed
    as pointers (the only kind seen in the nodes, their links) and their adjoints dropped: a
    zero gradient, silently (found by a new-user check). Refused now; the copy by insertion
    the hint gives is exact."""
    (tmp_path / "m.cpp").write_text(MAP_COPY)
    r = subprocess.run([str(BIN / "enzyme-c++"), "-O2", f"-DMAP={kind}", "m.cpp", "-o", "m"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode != 0 and "cannot deduce the type of the memory being copied" in \
        r.stderr and "Traceback" not in r.stderr, r.stderr
    subprocess.run([str(BIN / "enzyme-c++"), "-O2", f"-DMAP={kind}", "-DBY_INSERTION", "m.cpp",
                    "-o", "m"], cwd=tmp_path, check=True)
    out = subprocess.run(["./m"], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert [float(v) for v in out.stdout.split()] == [2.0, 4.0, 6.0], out.stdout


FAST_RSQRT_INLINED = r"""
#include <stdint.h>
#include <string.h>
static inline double fast_rsqrt(double x) {
  uint64_t i;
  memcpy(&i, &x, 8);
  i = 0x5fe6eb50c7b537a9 - (i >> 1);
  double y;
  memcpy(&y, &i, 8);
  return y * (1.5 - 0.5 * x * y * y);
}
double pot(double r) { return fast_rsqrt(r * r + 1.0); }
double __enzyme_autodiff(void *, ...);
int main(void) { return __enzyme_autodiff((void *)pot, 2.0) > 0; }
"""


def test_float_trick_names_the_inlined_function_and_a_safe_hint(tmp_path):
    """Bit manipulation of a double inlined into its caller: the message names the function
    whose code it is beside the caller (it named only the caller), and the hint is a derivative
    of one's own, not marking the function inactive (which would drop its derivative)."""
    (tmp_path / "p.c").write_text(FAST_RSQRT_INLINED)
    env = dict(os.environ, PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""))
    r = subprocess.run([str(BIN / "enzyme-cc"), "-O2", "-g", "p.c", "-o", "p"], cwd=tmp_path,
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 1 and "enzyme-cc: error: p.c:7:" in r.stderr, r.stderr
    assert "in function 'pot' (code of 'fast_rsqrt', inlined there)" in r.stderr, r.stderr
    assert "__enzyme_register_gradient" in r.stderr and "inactive would drop" in r.stderr


REVERSE_WIDTH_HEAP = r"""
#include <stdlib.h>
void f(const double *a, double *y, int n) {
  double *t = malloc(n * sizeof *t);
  for (int i = 0; i < n; i++) t[i] = a[i] * a[i];
  for (int i = 0; i < n; i++) y[i] = t[i] * t[(i + 1) % n];
  free(t);
}
extern int enzyme_dup, enzyme_const, enzyme_width, enzyme_dupnoneed;
void __enzyme_autodiff(void *, ...);
int main(void) {
  double a[3] = {1, 2, 3}, da0[3] = {0}, da1[3] = {0}, y[3], dy0[3] = {1}, dy1[3] = {0, 0, 1};
  __enzyme_autodiff((void *)f, enzyme_width, 2, enzyme_dup, a, da0, da1, enzyme_dupnoneed, y,
                    dy0, dy1, enzyme_const, 3);
  return 0;
}
"""


def test_reverse_width_refusal_names_the_heap_block(tmp_path):
    """Reverse vector mode over a function with a malloc'd temporary is refused (its shadow is
    one lane's); the message names the allocation and its line, where it gave an IR value."""
    (tmp_path / "v.c").write_text(REVERSE_WIDTH_HEAP)
    env = dict(os.environ, PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""))
    r = subprocess.run([str(BIN / "enzyme-cc"), "-O2", "-g", "v.c", "-o", "v"], cwd=tmp_path,
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 1, r.stderr
    assert "a heap block allocated by 'malloc' (v.c:4:" in r.stderr, r.stderr
    assert "__enzyme_fwddiff with enzyme_width" in r.stderr and "Traceback" not in r.stderr


STD_FUNCTION_CONST_THIS = r"""
#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>
extern int enzyme_const, enzyme_dup;
double __enzyme_autodiff(void *, ...);
double integrate(const std::function<double(double)> &f, double a, double b, int n) {
  double h = (b - a) / n, s = 0.5 * (f(a) + f(b));
  for (int i = 1; i < n; ++i) s += f(a + i * h);
  return s * h;
}
struct Model {
  std::vector<double> coef;
  double eval(double t) const {
    double s = 0, tk = 1;
    for (double c : coef) { s += c * tk; tk *= t; }
    return s;
  }
  double loss(double k) const {
    return integrate([&](double t) { double r = eval(t) - std::sin(k * t); return r * r; },
                     0.0, 2.0, 50);
  }
};
double loss_of(const Model *m, double k) { return m->loss(k); }
int main() {
  Model m{{0.1, 0.9, -0.2, 0.05}}, dm{{0, 0, 0, 0}};
  double k = 1.3, h = 1e-6;
#ifdef DUP
  double dk = __enzyme_autodiff((void *)loss_of, enzyme_dup, &m, &dm, k);
#else
  double dk = __enzyme_autodiff((void *)loss_of, enzyme_const, &m, k);
#endif
  std::printf("%.9f %.9f\n", dk, (m.loss(k + h) - m.loss(k - h)) / (2 * h));
}
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_const_object_captured_by_std_function_lambda(tmp_path, level):
    """An enzyme_const object whose member calls a lambda capturing `this` and an active value
    through std::function: the derivative read the object through a null shadow in the
    lambda's invoker (a segfault). The record is now followed into an indirect call's possible
    targets, and the build is refused with the hint to pass the object enzyme_dup, which
    gives the central difference (std::function's manager may store the closure's own address
    into it, so the fields of analysis/const_fields.py are not followed there)."""
    (tmp_path / "m.cpp").write_text(STD_FUNCTION_CONST_THIS)
    env = dict(os.environ, PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""))
    r = subprocess.run([str(BIN / "enzyme-c++"), level, "m.cpp", "-o", "m"], cwd=tmp_path,
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 1, r.stderr
    assert "'Model::loss(double) const'" in r.stderr and "is stored into memory that has one" \
        in r.stderr and "pass it enzyme_dup with a zero-filled shadow" in r.stderr, r.stderr
    # (the implicit object is named: "argument 1" alone was read as the first listed one)
    assert "(argument 1 ('this') of 'Model::loss(double) const')" in r.stderr, r.stderr
    subprocess.run([str(BIN / "enzyme-c++"), level, "-DDUP", "m.cpp", "-o", "m"], cwd=tmp_path,
                   check=True, env=env, timeout=300)
    ad, fd = map(float, subprocess.run([str(tmp_path / "m")], capture_output=True, text=True,
                                       check=True).stdout.split())
    assert abs(ad - fd) <= 1e-6 * (1 + abs(fd)), (ad, fd)


CFI_IN_GRADIENT = r"""
#include <ISO_Fortran_binding.h>
void sumsq(CFI_cdesc_t *u, double *out);
void __enzyme_autodiff(void *, ...);
static double wrap(double *u, int n) {
  CFI_CDESC_T(1) d;
  CFI_index_t ext[1] = {n};
  CFI_establish((CFI_cdesc_t *)&d, u, CFI_attribute_other, CFI_type_double, 0, 1, ext);
  double out;
  sumsq((CFI_cdesc_t *)&d, &out);
  return out;
}
int main(void) {
  double u[3] = {1, 2, 3}, du[3] = {0};
  __enzyme_autodiff((void *)wrap, u, du, 3);
  return 0;
}
"""


def test_cfi_establish_refusal_warns_against_declaring_it_inactive(tmp_path):
    """A C wrapper building an ISO_Fortran_binding descriptor inside the differentiated code:
    refused; the hint said to declare CFI_establish inactive, which built and gave 0 0 0 for
    2 4 6 (it keeps the active address in the descriptor). Now it says what works."""
    (tmp_path / "m.c").write_text(CFI_IN_GRADIENT)
    env = dict(os.environ, PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""))
    r = subprocess.run([str(BIN / "enzyme-cc"), "-O2", "m.c", "-o", "m"], cwd=tmp_path,
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 1, r.stderr
    assert "no derivative rule for call to 'CFI_establish'" in r.stderr, r.stderr
    assert "declaring them inactive would give a wrong derivative" in r.stderr, r.stderr
    assert "__enzyme_inactivefn" not in r.stderr and "Traceback" not in r.stderr, r.stderr


TWO_REFUSALS = """\
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
double mystery(double);
double other(double);
double f(double x) { return mystery(x) * x; }
double g(double x) { return other(x) + x; }
double h(double x) { return x * x; }
int main(void) {
  printf("%g %g %g\\n", __enzyme_autodiff((void *)f, 2.0), __enzyme_autodiff((void *)g, 2.0),
         __enzyme_autodiff((void *)h, 2.0));
  return 0;
}
"""


def test_each_marker_refusal_reported(tmp_path):
    """Two marker calls refused for different reasons: both are reported, each as a compiler
    error of its own (only the first was, so a port needed a link per refusal)."""
    (tmp_path / "two.c").write_text(TWO_REFUSALS)
    (tmp_path / "lib.c").write_text("double mystery(double x) { return x; }\n"
                                    "double other(double x) { return x; }\n")
    subprocess.run(["clang-22", "-O2", "-c", "lib.c"], cwd=tmp_path, check=True)
    r = subprocess.run([str(BIN / "enzyme-cc"), "-O2", "two.c", "lib.o", "-o", "two"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 1 and "Traceback" not in r.stderr and "internal" not in r.stderr
    errors = [line for line in r.stderr.splitlines() if line.startswith("enzyme-cc: error:")]
    assert len(errors) == 2, r.stderr
    assert "in function 'f'" in errors[0] and "'mystery'" in errors[0]
    assert "in function 'g'" in errors[1] and "'other'" in errors[1]
    assert not (tmp_path / "two").exists()


CONST_SCRATCH_OWNER = """\
typedef struct { int n; double *scratch; } Work;
extern int enzyme_dup, enzyme_const;
extern double __enzyme_autodiff(void *, ...);
__attribute__((noinline)) static void gather(Work *w, const double *x) {
  for (int i = 0; i < w->n; i++) w->scratch[i] = 2 * x[i];
}
double energy(Work *w, const double *x) {
  gather(w, x);
  double s = 0;
  for (int i = 0; i < w->n; i++) s += w->scratch[i] * w->scratch[i];
  return s;
}
int main(void) {
  double a[3], da[3], x[3] = {1, 2, 3}, dx[3] = {0};
  Work w = {3, a}, dw = {3, da};
  __enzyme_autodiff((void *)energy, enzyme_dup, &w, &dw, enzyme_dup, x, dx);
  __enzyme_autodiff((void *)energy, enzyme_const, &w, enzyme_dup, x, dx);
  return 0;
}
"""


def test_refusal_names_the_marker_call_and_its_const_arguments(tmp_path):
    """A refusal inside a helper of the differentiated function (active data stored into the
    scratch buffer of a struct passed enzyme_const, HPCCG's send buffer) also names the marker
    call that asked for the derivative and the arguments it passes enzyme_const: with two calls
    of one function, the message alone did not say which one to change."""
    (tmp_path / "w.c").write_text(CONST_SCRATCH_OWNER)
    r = subprocess.run([str(BIN / "enzyme-cc"), "-O2", "-g", "w.c", "-o", "w"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "w.c:5:" in r.stderr and "in function 'gather'" in r.stderr, r.stderr
    assert "note: in the derivative of 'energy' asked for at w.c:17:3, which passes " \
           "argument 1 as enzyme_const" in r.stderr, r.stderr


@pytest.mark.parametrize("hops", [1, 4])
@pytest.mark.parametrize("level", ["-O2", "-O0"])
def test_constant_data_read_back_through_a_cycle_of_records(tmp_path, level, hops):
    """The ODE driver of tests/ad_programs/ode_driver_back_pointers.c, its step reading the
    system back through the driver its evolve object points to (`e->driver->sys`): one hop
    is inside the paths followed, and right; four hops go past where the cycle is cut, and
    the store of the constant data is refused, naming it, rather than read through a null
    shadow."""
    src = (Path(__file__).parent / "ad_programs" / "ode_driver_back_pointers.c").read_text()
    hop = "sys = e" + "->driver->e" * (hops - 1) + "->driver->sys; "
    call = "sys->function(*t, y, s->k1, sys->params);"
    assert call in src
    (tmp_path / "p.c").write_text(src.replace(call, hop + call))
    r = subprocess.run([str(BIN / "enzyme-cc"), level, "p.c", "-lm", "-o", "p"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    if hops == 4:
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        assert "in function 'loss'" in r.stderr and \
            "a pointer to double data without a shadow (argument 1 of 'loss')" in r.stderr, \
            r.stderr
        return
    assert r.returncode == 0, r.stderr
    out = subprocess.run(["./p"], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.count("CHECK") == 7, out.stdout


# one message buffer packed with records holding a pointer on one path and with doubles on the
# other: no one type of the copy's bytes is right on both paths (at -O2 the copy is inlined
# into the function packing both ways)
TWO_LAYOUT_BUFFER = """\
#include <stdlib.h>
#include <string.h>
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
typedef struct { const double *src; double r; } Msg;
enum { N = 8 };
static void pack(int recs, const double *v, char *buf) {
  for (int i = 0; i < N; i++)
    if (recs) { ((Msg *)buf)[i].src = v + i; ((Msg *)buf)[i].r = v[i]; }
    else ((double *)buf)[i] = v[i];
}
static void send(const char *from, char *to, int len) { memcpy(to, from, len); }
static char a[N * sizeof(Msg)], b[N * sizeof(Msg)];   /* (kept between calls) */
double total(const double *v, int recs) {
  pack(recs, v, a);
  send(a, b, N * sizeof(Msg));
  double s = 0;
  for (int i = 0; i < N; i++) s += recs ? ((Msg *)b)[i].r : ((double *)b)[i];
  return s;
}
int main(void) {
  double v[N] = {1}, dv[N] = {0};
  __enzyme_autodiff((void *)total, enzyme_dup, v, dv, enzyme_const, 0);
  return dv[0] != 1;
}
"""


def test_buffer_laid_out_two_ways_is_refused(tmp_path):
    """A copy whose bytes hold a pointer on one path and a double on another is refused,
    naming the clash (its pointer bytes must not be added as a double, nor the double's
    adjoint dropped), with a hint to keep the layouts apart."""
    src = tmp_path / "two_layouts.c"
    src.write_text(TWO_LAYOUT_BUFFER)
    env = dict(os.environ, PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""))
    r = subprocess.run([str(BIN / "enzyme-cc"), "-O2", "-g", str(src), "-o",
                        str(tmp_path / "a.out")], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    assert "two_layouts.c:12" in r.stderr and "'total'" in r.stderr, r.stderr
    assert "accesses a double at byte 0 of the copied memory, where the copy's type has a " \
        "pointer at byte 0: one buffer laid out two ways" in r.stderr, r.stderr
    assert "hint: pack each layout into a buffer of its own" in r.stderr, r.stderr


# a halo exchange whose buffers functions reached through pointers pack and unpack (records of
# an int and doubles, or plain doubles), with the sent buffer read again after the copy
VIRTUAL_PACKING_REREAD = """\
#include <stdlib.h>
#include <string.h>
int enzyme_dup;
void __enzyme_autodiff(void *, ...);
typedef struct { int id; double r[2]; } Msg;
typedef struct { int (*load)(const double *, char *); void (*unload)(double *, const char *, int); } Ex;
static int load_msgs(const double *v, char *b) {
  for (int i = 0; i < 4; i++) { ((Msg *)b)[i].id = i; ((Msg *)b)[i].r[1] = v[i]; }
  return 4 * sizeof(Msg);
}
static void unload_msgs(double *h, const char *b, int n) {
  for (int i = 0; i < n / (int)sizeof(Msg); i++) h[((const Msg *)b)[i].id] += ((const Msg *)b)[i].r[1];
}
static int load_vals(const double *v, char *b) { memcpy(b, v, 4 * sizeof(double)); return 4 * sizeof(double); }
static void unload_vals(double *h, const char *b, int n) {
  for (int i = 0; i < n / (int)sizeof(double); i++) h[i] += ((const double *)b)[i];
}
Ex *ex;
__attribute__((noinline)) void exchange(const double *v, double *h) {
  char *send = malloc(4 * sizeof(Msg)), *recv = malloc(4 * sizeof(Msg));
  int n = ex->load(v, send);
  memcpy(recv, send, n);
  ex->unload(h, recv, n);
  ex->unload(h, send, n);
  free(send);
  free(recv);
}
int main(int argc, char **argv) {
  (void)argv;
  Ex a = {argc > 1 ? load_vals : load_msgs, argc > 1 ? unload_vals : unload_msgs};
  ex = &a;
  double v[4] = {1, 2, 3, 4}, dv[4] = {0}, h[4] = {0}, dh[4] = {1, 1, 1, 1};
  __enzyme_autodiff((void *)exchange, enzyme_dup, v, dv, enzyme_dup, h, dh);
  return dv[0] != 2;
}
"""


def test_packed_buffer_read_after_its_copy_is_refused(tmp_path):
    """A `char *` buffer packed through a function pointer, copied, and read again after the
    copy cannot have its shadow bytes moved whatever they hold (the copy's type is unknown and
    the later read needs the sent bytes' adjoints): refused, with a hint for C code (not the
    C++ one about std::vector)."""
    src = tmp_path / "reread.c"
    src.write_text(VIRTUAL_PACKING_REREAD)
    env = dict(os.environ, PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""))
    r = subprocess.run([str(BIN / "enzyme-cc"), "-O2", "-g", str(src), "-o",
                        str(tmp_path / "a.out")], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    assert "reread.c:22" in r.stderr and "'exchange'" in r.stderr, r.stderr
    assert "cannot deduce the type of the memory being copied" in r.stderr, r.stderr
    assert "does not read it after the copy" in r.stderr and "std::vector" not in r.stderr, \
        r.stderr


MISSPELT_MARKER = """\
#include <stdio.h>
extern int enzyme_dup, enzyme_dupnonee, enzyme_const;
void __enzyme_autodiff(void *, ...);
double sq(const double *x, int n) { double s = 0; for (int i = 0; i < n; i++) s += x[i] * x[i]; return s; }
int main(void) {
  double x[3] = {1, 2, 3}, dx[3] = {0};
  __enzyme_autodiff((void *)sq, enzyme_dupnonee, x, dx, enzyme_const, 3);
  printf("%g\\n", dx[0]);
  return 0;
}
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_misspelt_marker_is_named(tmp_path, level):
    """A global named like an activity marker but none of them is named with the marker it may
    have meant (it was passed as an int argument: 'too many arguments', or an undefined
    symbol)."""
    src = tmp_path / "misspelt.c"
    src.write_text(MISSPELT_MARKER)
    env = dict(os.environ, PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""))
    r = subprocess.run([str(BIN / "enzyme-cc"), level, "-g", str(src), "-o",
                        str(tmp_path / "a.out")], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    assert "misspelt.c:7:" in r.stderr and "'enzyme_dupnonee' is not an activity marker; " \
        "hint: did you mean 'enzyme_dupnoneed'?" in r.stderr, r.stderr


REVERSE_WIDTH_AUTOMATIC_F90 = """\
module markers
  use iso_c_binding
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
  integer(c_int), bind(c, name="enzyme_dupnoneed") :: enzyme_dupnoneed
  integer(c_int), bind(c, name="enzyme_const") :: enzyme_const
  integer(c_int), bind(c, name="enzyme_width") :: enzyme_width
end module
subroutine f(a, y, n) bind(c)
  use iso_c_binding
  integer(c_int), value :: n
  real(c_double) :: a(n), y(n)
  real(c_double) :: t(n)
  integer :: i
  do i = 1, n
    t(i) = a(i) * a(i)
  end do
  do i = 1, n
    y(i) = t(i) * t(mod(i, n) + 1)
  end do
end subroutine
program main
  use iso_c_binding
  use markers
  interface
    subroutine f(a, y, n) bind(c)
      use iso_c_binding
      integer(c_int), value :: n
      real(c_double) :: a(n), y(n)
    end subroutine
    subroutine grad(fp, w, nw, d1, a, da0, da1, d2, y, dy0, dy1, c, n) bind(c, name="__enzyme_autodiff")
      use iso_c_binding
      type(c_funptr), value :: fp
      integer(c_int) :: w, d1, d2, c
      integer(c_int), value :: nw, n
      real(c_double) :: a(*), da0(*), da1(*), y(*), dy0(*), dy1(*)
    end subroutine
  end interface
  real(c_double) :: a(3) = [1d0, 2d0, 3d0], da0(3) = 0, da1(3) = 0, y(3), dy0(3) = [1d0, 0d0, 0d0], dy1(3) = [0d0, 0d0, 1d0]
  call grad(c_funloc(f), enzyme_width, 2, enzyme_dup, a, da0, da1, enzyme_dupnoneed, y, dy0, dy1, enzyme_const, 3)
  print *, da0, da1
end program
"""


def test_reverse_width_refusal_names_the_local_array(tmp_path):
    """Reverse vector mode over a Fortran routine with an automatic array is refused (its
    shadow is one lane's); the message names the array and its declaration, where it gave an
    IR value ('%6')."""
    (tmp_path / "vw.f90").write_text(REVERSE_WIDTH_AUTOMATIC_F90)
    env = dict(os.environ, PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""))
    r = subprocess.run([str(BIN / "enzyme-fc"), "-O2", "-g", "vw.f90", "-o", "vw"], cwd=tmp_path,
                       capture_output=True, text=True, env=env, timeout=180)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "the local 't' (vw.f90:12:" in r.stderr and "one lane's" in r.stderr, r.stderr


BYTE_LOOP_COPY = """\
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
static void copy_bytes(void *d, const void *s, unsigned long n) {
  unsigned char *dd = d;
  const unsigned char *ss = s;
  for (unsigned long i = 0; i < n; i++) dd[i] = ss[i];
}
double f(const double *x, double *y, int n) {
  double t[16];
  for (int i = 0; i < n; i++) t[i] = x[i] * x[i];
  copy_bytes(y, t, n * sizeof(double));
  double s = 0;
  for (int i = 0; i < n; i++) s += (i + 1) * y[i];
  return s;
}
int main(void) {
  double x[8] = {1}, dx[8] = {0}, y[8], dy[8] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_dup, y, dy, enzyme_const, 8);
  return dx[0] != 2;
}
"""


def test_float_copied_byte_by_byte_is_refused(tmp_path):
    """Doubles copied by a hand-written byte loop that stays a loop (the unoptimized pipeline:
    optimized code makes it a memcpy, which is differentiated) are refused at the byte store;
    every adjoint was silently 0 (the bytes were taken for integer data). The loop's body is
    not on every path (n may be 0), so the link succeeds and the derivative stops there when it
    runs, with the refusal's message and location (jl's gs_scatter has such an integer arm,
    which Nekbone runs on integers only)."""
    src = tmp_path / "bytes.c"
    src.write_text(BYTE_LOOP_COPY)
    env = dict(os.environ, PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""),
               ENZYME_CC_PREOPT="0")
    subprocess.run([str(BIN / "enzyme-cc"), "-O2", "-g", str(src), "-o", str(tmp_path / "a.out")],
                   check=True, env=env, timeout=120)
    r = subprocess.run([str(tmp_path / "a.out")], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    assert "bytes.c:6:" in r.stderr and "1 byte(s) of a float are copied as an integer" in \
        r.stderr and "hint: copy whole values" in r.stderr, r.stderr


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_integer_arm_run_on_floats_stops_with_a_message(tmp_path, level):
    """A type-generic kernel's integer arm (tests/ad_programs/type_generic_gather.c) handed
    doubles where the derivative runs: integer arithmetic on a float's bits, which would lose
    its derivative. The arm does not run on every path, so the link succeeds and the
    derivative stops there with the refusal's message instead of a wrong gradient."""
    src = (Path(__file__).parent / "ad_programs" / "type_generic_gather.c").read_text()
    (tmp_path / "g.c").write_text(src.replace("gs_gather(node, local, map, 6, GS_DOUBLE)",
                                              "gs_gather(node, local, map, 6, GS_LONG)"))
    subprocess.run(["enzyme-cc", level, "g.c", "-lm", "-o", "g"], cwd=tmp_path, check=True)
    r = subprocess.run(["./g"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode != 0 and "CHECK" not in r.stdout, r.stdout
    assert "enzyme-cc: error: in function 'gs_gather'" in r.stderr, r.stderr
    assert "integer arithmetic on data that holds a float" in r.stderr, r.stderr


DIAGNOSTIC_WITHOUT_BITCODE = r"""
#include <stdio.h>
extern double __enzyme_autodiff(void *, ...);
extern double __enzyme_fwddiff(void *, ...);
double mystery(double);   /* in an object without bitcode */
int verbose = 0;
double f(double x) {
  double y = x * x;
  if (verbose) y += mystery(y);
  return y;
}
int main(int c, char **v) {
  verbose = c > 1;
  printf("%g %g\n", __enzyme_autodiff((void *)f, 3.0), __enzyme_fwddiff((void *)f, 3.0, 1.0));
  return 0;
}
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_call_without_bitcode_on_a_branch_stops_only_if_taken(tmp_path, level):
    """A call without bitcode or rule that only some runs make (a diagnostic under a flag):
    the program builds and both modes are right where the branch is not taken (was a link
    error); where it is, the derivative stops with the refusal's message. A call every run
    makes is still refused at the link (test_error_names_function[external_no_bitcode-*])."""
    (tmp_path / "main.c").write_text(DIAGNOSTIC_WITHOUT_BITCODE)
    (tmp_path / "lib.c").write_text("double mystery(double t) { return 0.5 * t; }\n")
    subprocess.run(["clang-22", "-O2", "-c", "lib.c", "-o", "lib.o"], cwd=tmp_path, check=True)
    subprocess.run([str(BIN / "enzyme-cc"), level, "main.c", "lib.o", "-o", "prog"],
                   cwd=tmp_path, check=True, timeout=120)
    r = subprocess.run(["./prog"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.split() == ["6", "6"], r.stdout
    r = subprocess.run(["./prog", "verbose"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode != 0 and r.stdout == "", r.stdout
    assert "enzyme-cc: error: in function 'f'" in r.stderr, r.stderr
    assert "no derivative rule for call to 'mystery' and no bitcode for it" in r.stderr
