/* __enzyme_fixed_point (enzyme/fixed_point.h): derivatives of converged iterations by the
   implicit-function theorem, checked against analytic derivatives, central finite differences
   and forward vs reverse mode:
   - x = cos(p x) (scalar state),
   - Babylonian square roots x = (x + a/x)/2 (a vector state; Newton: phi_z = 0 at the root),
   - a 3x3 system A x = b by Jacobi iteration, whose step also writes an output y,
   - a control function (Tapenade's protocol) and enzyme_fp_max_iters. */
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
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
void __enzyme_fwddiff(void *, ...);

/* ---- x = cos(p x) ---- */
__attribute__((noinline)) static int cos_step(int64_t i, double *x, double *p, double *tol) {
  (void)i;
  double nx = cos(p[0] * x[0]);
  double e = fabs(nx - x[0]);
  x[0] = nx;
  return e > *tol;
}
static void cos_solve(double *x, double *p, double *out, double *tol) {
  x[0] = 0.5;
  __enzyme_fixed_point((void *)cos_step, enzyme_fp_state, x, (int64_t)sizeof(double),
                       enzyme_fp_reduction, 1e-30, x, p, tol);
  out[0] = x[0] * x[0] + sin(p[0]);
}

/* ---- Babylonian square roots of a[0..3] ---- */
#define NR 4
__attribute__((noinline)) static int sqrt_step(int64_t i, double *x, double *a, double *tol) {
  (void)i;
  double err = 0;
  for (int k = 0; k < NR; k++) {
    double next = 0.5 * (x[k] + a[k] / x[k]);
    err = fmax(err, fabs(next - x[k]));
    x[k] = next;
  }
  return err > *tol;
}
static int calls;
static double first_cumul;
static int control(double *cumul, double *reduction) {
  if (calls++ == 0)
    first_cumul = *cumul;
  return *cumul < 0 || *cumul > *reduction;
}
static double sqrt_sum(double *a, double *tol, int use_control) {
  double x[NR];
  for (int k = 0; k < NR; k++)
    x[k] = 1.0;
  if (use_control)
    __enzyme_fixed_point((void *)sqrt_step, enzyme_fp_state, x, (int64_t)sizeof(x),
                         enzyme_fp_reduction, 1e-28, enzyme_fp_control, control, x, a, tol);
  else
    __enzyme_fixed_point((void *)sqrt_step, enzyme_fp_state, x, (int64_t)sizeof(x),
                         enzyme_fp_max_iters, (int64_t)50, x, a, tol);
  double s = 0;
  for (int k = 0; k < NR; k++)
    s += (k + 1) * x[k];
  return s;
}
static void sqrt_loss(double *a, double *out, double *tol) { *out = sqrt_sum(a, tol, 0); }
static void sqrt_loss_ctl(double *a, double *out, double *tol) { *out = sqrt_sum(a, tol, 1); }

/* ---- Jacobi iteration for A x = b; the step also writes y = A_diag * x ---- */
#define N 3
__attribute__((noinline)) static int jacobi_step(int64_t i, double *x, double *A, double *b,
                                                 double *y, double *tol) {
  (void)i;
  double nx[N], err = 0;
  for (int r = 0; r < N; r++) {
    double s = b[r];
    for (int c = 0; c < N; c++)
      if (c != r)
        s -= A[r * N + c] * x[c];
    nx[r] = s / A[r * N + r];
  }
  for (int r = 0; r < N; r++) {
    err = fmax(err, fabs(nx[r] - x[r]));
    y[r] = A[r * N + r] * x[r] * x[r];
    x[r] = nx[r];
  }
  return err > *tol;
}
static const double wts[N] = {1.0, -2.0, 0.5};
static double jacobi(double *A, double *b, double *tol) {
  double x[N] = {0, 0, 0}, y[N];
  __enzyme_fixed_point((void *)jacobi_step, enzyme_fp_state, x, (int64_t)sizeof(x),
                       enzyme_fp_reduction, 1e-30, x, A, b, y, tol);
  double s = 0;
  for (int r = 0; r < N; r++)
    s += wts[r] * x[r] + y[r];
  return s;
}
static void jacobi_loss(double *A, double *b, double *out, double *tol) { *out = jacobi(A, b, tol); }

int main(void) {
  double tol = 1e-15;
  /* cos: x = cos(p x) at the fixed point, so dx/dp = -sin(p x) x / (1 + p sin(p x)) */
  {
    double x = 0, p = 0.7, out = 0, dx = 0, dp = 0, dout = 1;
    __enzyme_autodiff((void *)cos_solve, enzyme_dup, &x, &dx, enzyme_dup, &p, &dp,
                      enzyme_dup, &out, &dout, enzyme_const, &tol);
    double s = sin(p * x), dxdp = -s * x / (1 + p * s);
    check("cos_rev_dp", dp, 2 * x * dxdp + cos(p), 1e-12);
    check("cos_rev_state_shadow_zero", dx, 0.0, 1e-12);
    double fx = 0, fdx = 7, fdp = 1, fo = 0, fdo = 0;
    __enzyme_fwddiff((void *)cos_solve, enzyme_dup, &fx, &fdx, enzyme_dup, &p, &fdp,
                     enzyme_dup, &fo, &fdo, enzyme_const, &tol);
    check("cos_fwd_dout", fdo, 2 * x * dxdp + cos(p), 1e-12);
    check("cos_fwd_dx", fdx, dxdp, 1e-12);
    check("cos_fwd_rev_dot", fdo * 1.0, dp * 1.0, 1e-12);
  }
  /* sqrt: d/da_k sum (k+1) sqrt(a_k) = (k+1) / (2 sqrt(a_k)) */
  {
    double a[NR] = {2.0, 3.0, 10.0, 0.25}, da[NR] = {0}, out = 0, dout = 1;
    __enzyme_autodiff((void *)sqrt_loss, enzyme_dup, a, da, enzyme_dup, &out, &dout,
                      enzyme_const, &tol);
    double v[NR] = {0.3, -1.0, 2.0, 0.5}, fo = 0, fdo = 0, dot = 0;
    __enzyme_fwddiff((void *)sqrt_loss, enzyme_dup, a, v, enzyme_dup, &fo, &fdo,
                     enzyme_const, &tol);
    char name[32];
    for (int k = 0; k < NR; k++) {
      snprintf(name, sizeof name, "sqrt_rev_da%d", k);
      check(name, da[k], (k + 1) / (2 * sqrt(a[k])), 1e-12);
      dot += v[k] * da[k];
    }
    check("sqrt_fwd_rev_dot", fdo, dot, 1e-12);
    check("sqrt_primal", fo, sqrt(2.0) + 2 * sqrt(3.0) + 3 * sqrt(10.0) + 4 * 0.5, 1e-12);
    /* the control function: first called with -1, then after each pass */
    double dac[NR] = {0};
    dout = 1;
    __enzyme_autodiff((void *)sqrt_loss_ctl, enzyme_dup, a, dac, enzyme_dup, &out, &dout,
                      enzyme_const, &tol);
    check("ctl_first_cumul", first_cumul, -1.0, 0);
    check("ctl_called", calls >= 2, 1, 0);
    for (int k = 0; k < NR; k++) {
      snprintf(name, sizeof name, "ctl_rev_da%d", k);
      check(name, dac[k], (k + 1) / (2 * sqrt(a[k])), 1e-12);
    }
  }
  /* Jacobi: L = w.x + sum_r A_rr x_r^2 (y from the last step, at the fixed point), x = A^-1 b */
  {
    double A[N * N] = {4, 1, -1, 2, 5, 1, 0.5, -1, 3}, b[N] = {1, 2, 3};
    double dA[N * N] = {0}, db[N] = {0}, out = 0, dout = 1;
    __enzyme_autodiff((void *)jacobi_loss, enzyme_dup, A, dA, enzyme_dup, b, db,
                      enzyme_dup, &out, &dout, enzyme_const, &tol);
    double h = 1e-6, dot = 0;
    double vA[N * N], vb[N], fdA[N * N] = {0}, fdb[N] = {0}, fo = 0, fdo = 0;
    char name[32];
    for (int k = 0; k < N * N; k++) {
      double keep = A[k];
      A[k] = keep + h;
      double up = jacobi(A, b, &tol);
      A[k] = keep - h;
      double dn = jacobi(A, b, &tol);
      A[k] = keep;
      snprintf(name, sizeof name, "jacobi_rev_dA%d", k);
      check(name, dA[k], (up - dn) / (2 * h), 1e-6);
      vA[k] = 0.1 * (k + 1) - 0.4;
      dot += vA[k] * dA[k];
    }
    for (int k = 0; k < N; k++) {
      double keep = b[k];
      b[k] = keep + h;
      double up = jacobi(A, b, &tol);
      b[k] = keep - h;
      double dn = jacobi(A, b, &tol);
      b[k] = keep;
      snprintf(name, sizeof name, "jacobi_rev_db%d", k);
      check(name, db[k], (up - dn) / (2 * h), 1e-6);
      vb[k] = 1.0 - 0.7 * k;
      dot += vb[k] * db[k];
    }
    memcpy(fdA, vA, sizeof vA);
    memcpy(fdb, vb, sizeof vb);
    __enzyme_fwddiff((void *)jacobi_loss, enzyme_dup, A, fdA, enzyme_dup, b, fdb,
                     enzyme_dup, &fo, &fdo, enzyme_const, &tol);
    check("jacobi_fwd_rev_dot", fdo, dot, 1e-12);
  }
  return failed != 0;
}
