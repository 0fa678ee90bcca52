/* __enzyme_set_fixed_point (enzyme/fixed_point.h): loops marked from inside, whose iterations
   the link step outlines into __enzyme_fixed_point (derivatives by the implicit-function
   theorem). Checked against analytic derivatives, central finite differences and forward vs
   reverse mode (dot-product test):
   - x = cos(p x) in a while loop (scalar state, default options),
   - Babylonian square roots of a[0..3] in a for loop with an iteration cap (vector state,
     computed reduction and max_iters; Newton: phi_z = 0 at the root), whose result is also
     read after the loop from a value the last iteration computed,
   - a 3x3 system A x = b by Jacobi iteration with a control function (Tapenade's protocol). */
#include <enzyme/fixed_point.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int failed;
static void check(const char *name, double got, double want, double rtol) {
  int ok = fabs(got - want) <= rtol * (1e-12 + fabs(want));
  printf("CHECK %s %.15g %.15g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern int enzyme_dup, enzyme_const, enzyme_out;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

/* ---- x = cos(p x) ---- */
__attribute__((noinline)) double cos_fp(double p) {
  double x[1] = {0.5}, e = 1;
  while (e > 1e-15) {
    __enzyme_set_fixed_point(-1.0, (int64_t)-1, (void *)0, x, (int64_t)sizeof x);
    double nx = cos(p * x[0]);
    e = fabs(nx - x[0]);
    x[0] = nx;
  }
  return x[0] * x[0] + sin(p);
}

/* ---- Babylonian square roots ---- */
#define NR 4
__attribute__((noinline)) double roots(const double *a, double red, int64_t cap) {
  double x[NR], last = 0;
  for (int k = 0; k < NR; k++)
    x[k] = 1;
  /* one exit (Enzyme's rule for a marked loop): no break, no && in the test */
  int go = 1;
  for (int it = 0; go; it++) {
    __enzyme_set_fixed_point(red, cap, (void *)0, x, (int64_t)sizeof x);
    double e = 0;
    for (int k = 0; k < NR; k++) {
      double nx = 0.5 * (x[k] + a[k] / x[k]);
      e += fabs(nx - x[k]);
      x[k] = nx;
    }
    last = x[0] * x[3];               /* read after the loop: the last iteration's */
    go = (e >= 1e-15) & (it < 99);
  }
  return last + x[1] + 2 * x[2];
}

/* ---- Jacobi for A x = b, with a control function ---- */
static int ctl_calls;
static int control(double *cumul, double *reduction) {
  static double first;
  ctl_calls++;
  if (*cumul < 0)
    return 1;                       /* before the first adjoint pass */
  if (first == 0 || *cumul > first)
    first = *cumul;
  return *cumul > 1e-28 * first && *cumul > 1e-300;
}
__attribute__((noinline)) double jacobi(const double *b, double s) {
  const double A[3][3] = {{4, 1, 0.5}, {1, 5, 1}, {0.5, 1, 6}};
  double x[3] = {0, 0, 0};
  double diff = 1;
  while (diff > 1e-14) {
    __enzyme_set_fixed_point(-1.0, (int64_t)500, (void *)control, x, (int64_t)sizeof x);
    double nx[3];
    diff = 0;
    for (int i = 0; i < 3; i++) {
      double r = s * b[i];
      for (int j = 0; j < 3; j++)
        if (j != i)
          r -= A[i][j] * x[j];
      nx[i] = r / A[i][i];
      diff += fabs(nx[i] - x[i]);
    }
    for (int i = 0; i < 3; i++)
      x[i] = nx[i];
  }
  return x[0] + 2 * x[1] + 3 * x[2];
}

int main(void) {
  /* cos: analytic dx/dp = -sin(px) x / (1 + p sin(px)) */
  double p = 0.7, h = 1e-6;
  double x = 0.5;
  for (int k = 0; k < 200; k++)
    x = cos(p * x);
  double dx = -sin(p * x) * x / (1 + p * sin(p * x));
  double want = 2 * x * dx + cos(p);
  double g = __enzyme_autodiff((void *)cos_fp, p);
  /* default options: the squared norm of the update falls by 1e-12, about 1e-6 in the value */
  check("cos_reverse", g, want, 1e-5);
  check("cos_forward", __enzyme_fwddiff((void *)cos_fp, p, 1.0), want, 1e-5);
  check("cos_fd", g, (cos_fp(p + h) - cos_fp(p - h)) / (2 * h), 1e-6);
  check("cos_primal", cos_fp(p), x * x + sin(p), 1e-14);

  /* roots: d/da_k of sqrt(a0) sqrt(a3) + sqrt(a1) + 2 sqrt(a2) */
  double a[NR] = {2, 3, 5, 7}, da[NR] = {0};
  __enzyme_autodiff((void *)roots, enzyme_dup, a, da, enzyme_const, 1e-20, enzyme_const,
                    (int64_t)50);
  double exact[NR] = {sqrt(a[3]) / (2 * sqrt(a[0])), 1 / (2 * sqrt(a[1])), 1 / sqrt(a[2]),
                      sqrt(a[0]) / (2 * sqrt(a[3]))};
  char name[64];
  for (int k = 0; k < NR; k++) {
    snprintf(name, sizeof name, "roots_reverse_%d", k);
    check(name, da[k], exact[k], 1e-10);
    double ap[NR], am[NR];
    memcpy(ap, a, sizeof a);
    memcpy(am, a, sizeof a);
    ap[k] += h;
    am[k] -= h;
    snprintf(name, sizeof name, "roots_fd_%d", k);
    check(name, da[k], (roots(ap, 1e-20, 50) - roots(am, 1e-20, 50)) / (2 * h), 1e-6);
  }
  double v[NR] = {0.3, -0.2, 0.5, 0.1}, dot = 0;
  for (int k = 0; k < NR; k++)
    dot += v[k] * da[k];
  check("roots_dot", __enzyme_fwddiff((void *)roots, enzyme_dup, a, v, enzyme_const, 1e-20,
                                      enzyme_const, (int64_t)50), dot, 1e-10);

  /* Jacobi: d/db of c^T A^{-1} (s b) = s A^{-T} c, solved here directly */
  double b[3] = {1, 2, 3}, db[3] = {0};
  double ds = __enzyme_autodiff((void *)jacobi, enzyme_dup, b, db, enzyme_out, 1.5);
  double M[3][4] = {{4, 1, 0.5, 1}, {1, 5, 1, 2}, {0.5, 1, 6, 3}};   /* A symmetric: A^T y = c */
  for (int i = 0; i < 3; i++)
    for (int r = 0; r < 3; r++)
      if (r != i) {
        double f = M[r][i] / M[i][i];
        for (int c = 0; c < 4; c++)
          M[r][c] -= f * M[i][c];
      }
  double y[3], xs[3] = {0, 0, 0};
  for (int i = 0; i < 3; i++)
    y[i] = M[i][3] / M[i][i];
  for (int k = 0; k < 3; k++) {
    snprintf(name, sizeof name, "jacobi_reverse_%d", k);
    check(name, db[k], 1.5 * y[k], 1e-10);
  }
  (void)xs;
  check("jacobi_ds", ds, y[0] * b[0] + y[1] * b[1] + y[2] * b[2], 1e-10);
  check("jacobi_control_called", ctl_calls > 1, 1, 0);
  double tb[3] = {0.2, 0.1, -0.3};
  check("jacobi_dot", __enzyme_fwddiff((void *)jacobi, enzyme_dup, b, tb, 1.5, 0.4),
        tb[0] * db[0] + tb[1] * db[1] + tb[2] * db[2] + 0.4 * ds, 1e-10);
  if (failed)
    printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
