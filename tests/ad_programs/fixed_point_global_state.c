/* __enzyme_fixed_point whose state the step names itself instead of taking it as an argument
   (model state in globals, as Fortran codes hold it in COMMON blocks): a global array,
   two globals, a global next to a state passed as an argument, and a member of a global
   struct. Checked against the implicit-function theorem's derivative at the converged state
   (analytic), central differences, and forward vs reverse mode. The code after a solve
   overwrites the state: the reverse pass puts back the primal memory it found, so the state
   after the gradient is what the function left. */
#include <enzyme/fixed_point.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

static int failed;
static void check(const char *name, double got, double want, double rtol) {
  int ok = fabs(got - want) <= rtol * (1e-12 + fabs(want));
  printf("CHECK %s %.15g %.15g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

#define N 4
double u[N];                       /* A: a global array */
double s1, s2[2];                  /* B: two globals */
double gw;                         /* C: a global next to an argument */
struct common { double pad, root; } blk;   /* D: a member of a global struct */

/* ---- A: u_k = 0.4 cos(u_k) + x_k x_{N+k} ---- */
__attribute__((noinline)) static int step_a(int64_t i, const double *x) {
  (void)i;
  double err = 0;
  for (int k = 0; k < N; k++) {
    double n = 0.4 * cos(u[k]) + x[k] * x[N + k];
    err = fmax(err, fabs(n - u[k]));
    u[k] = n;
  }
  return err > 1e-15;
}
static double solve_a(const double *x) {
  for (int k = 0; k < N; k++)
    u[k] = 0;
  __enzyme_fixed_point((void *)step_a, enzyme_fp_state, u, (int64_t)sizeof u,
                       enzyme_fp_reduction, 1e-30, x);
  double f = 0;
  for (int k = 0; k < N; k++)
    f += (k + 1) * u[k] * u[k];
  for (int k = 0; k < N; k++)
    u[k] = -1;                     /* overwritten after the solve */
  return f;
}

/* ---- B: s1 = 0.5 cos(s2_0) + q, s2_0 = 0.5 sin(s1), s2_1 = 0.3 s1 s2_0 + q^2 ---- */
__attribute__((noinline)) static int step_b(int64_t i, double q) {
  (void)i;
  double a = 0.5 * cos(s2[0]) + q, b0 = 0.5 * sin(s1), b1 = 0.3 * s1 * s2[0] + q * q;
  double e = fabs(a - s1) + fabs(b0 - s2[0]) + fabs(b1 - s2[1]);
  s1 = a;
  s2[0] = b0;
  s2[1] = b1;
  return e > 1e-15;
}
static double solve_b(double q) {
  s1 = 0;
  s2[0] = s2[1] = 0;
  __enzyme_fixed_point((void *)step_b, enzyme_fp_state, &s1, (int64_t)sizeof s1,
                       enzyme_fp_state, s2, (int64_t)sizeof s2, enzyme_fp_reduction, 1e-30, q);
  return s1 + 2 * s2[0] + 3 * s2[1];
}

/* ---- C: the state z (an argument) and gw (a global) ---- */
__attribute__((noinline)) static int step_c(int64_t i, double *z, const double *q) {
  (void)i;
  double n0 = 0.5 * cos(z[1]) + gw * q[0], n1 = 0.25 * sin(z[0] + gw);
  double nw = 0.25 * cos(n0) + q[1];
  double e = fabs(n0 - z[0]) + fabs(n1 - z[1]) + fabs(nw - gw);
  z[0] = n0;
  z[1] = n1;
  gw = nw;
  return e > 1e-15;
}
static double solve_c(const double *q) {
  double z[2] = {0, 0};
  gw = 0;
  __enzyme_fixed_point((void *)step_c, enzyme_fp_state, z, (int64_t)sizeof z, enzyme_fp_state,
                       &gw, (int64_t)sizeof gw, enzyme_fp_reduction, 1e-30, z, q);
  return z[0] * z[1] + gw;
}

/* ---- D: Babylonian square root in blk.root (Newton: phi_z = 0 at the root) ---- */
__attribute__((noinline)) static int step_d(int64_t i, const double *a) {
  (void)i;
  double n = 0.5 * (blk.root + *a / blk.root);
  int go = fabs(n - blk.root) > 1e-15 * n;
  blk.root = n;
  return go;
}
static double solve_d(const double *a) {
  blk.pad = 0;
  blk.root = 1;
  __enzyme_fixed_point((void *)step_d, enzyme_fp_state, &blk.root, (int64_t)sizeof blk.root, a);
  return 3 * blk.root;
}

int main(void) {
  char name[48];
  double h = 1e-6;
  {
    double x[2 * N], dx[2 * N] = {0}, v[2 * N], dot = 0;
    for (int k = 0; k < 2 * N; k++) {
      x[k] = 0.2 + 0.1 * k;
      v[k] = 0.5 - 0.15 * k;
    }
    __enzyme_autodiff((void *)solve_a, enzyme_dup, x, dx);
    check("a_state_restored", u[0], -1, 0);
    for (int k = 0; k < N; k++) {
      /* IFT: du/dc = 1 / (1 + 0.4 sin u) at u = 0.4 cos u + c, c = x_k x_{N+k} */
      double c = x[k] * x[N + k], uk = 0;
      for (int it = 0; it < 200; it++)
        uk = 0.4 * cos(uk) + c;
      double dfdc = 2 * (k + 1) * uk / (1 + 0.4 * sin(uk));
      snprintf(name, sizeof name, "a_rev_dx%d", k);
      check(name, dx[k], dfdc * x[N + k], 1e-10);
      snprintf(name, sizeof name, "a_rev_dx%d", N + k);
      check(name, dx[N + k], dfdc * x[k], 1e-10);
    }
    for (int k = 0; k < 2 * N; k++) {
      double keep = x[k];
      x[k] = keep + h;
      double up = solve_a(x);
      x[k] = keep - h;
      double dn = solve_a(x);
      x[k] = keep;
      snprintf(name, sizeof name, "a_fd_dx%d", k);
      check(name, dx[k], (up - dn) / (2 * h), 1e-6);
      dot += v[k] * dx[k];
    }
    check("a_fwd_rev_dot", __enzyme_fwddiff((void *)solve_a, enzyme_dup, x, v), dot, 1e-10);
  }
  {
    double q = 0.3, dq = __enzyme_autodiff((void *)solve_b, q);
    solve_b(q);
    double ds1 = 1 / (1 + 0.25 * sin(s2[0]) * cos(s1)), ds20 = 0.5 * cos(s1) * ds1;
    double ds21 = 0.3 * (ds1 * s2[0] + s1 * ds20) + 2 * q;
    check("b_rev_dq", dq, ds1 + 2 * ds20 + 3 * ds21, 1e-10);
    check("b_fd_dq", dq, (solve_b(q + h) - solve_b(q - h)) / (2 * h), 1e-6);
    check("b_fwd_dq", __enzyme_fwddiff((void *)solve_b, q, 1.0), dq, 1e-10);
  }
  {
    double q[2] = {0.4, -0.2}, dq[2] = {0}, v[2] = {0.7, 1.3};
    __enzyme_autodiff((void *)solve_c, enzyme_dup, q, dq);
    for (int k = 0; k < 2; k++) {
      double keep = q[k];
      q[k] = keep + h;
      double up = solve_c(q);
      q[k] = keep - h;
      double dn = solve_c(q);
      q[k] = keep;
      snprintf(name, sizeof name, "c_fd_dq%d", k);
      check(name, dq[k], (up - dn) / (2 * h), 1e-6);
    }
    check("c_fwd_rev_dot", __enzyme_fwddiff((void *)solve_c, enzyme_dup, q, v),
          v[0] * dq[0] + v[1] * dq[1], 1e-10);
  }
  {
    double a = 7, da = 0;
    __enzyme_autodiff((void *)solve_d, enzyme_dup, &a, &da);
    check("d_rev_da", da, 3 / (2 * sqrt(a)), 1e-12);
    check("d_fd_da", da, (solve_d(&(double){a + h}) - solve_d(&(double){a - h})) / (2 * h), 1e-6);
    double t = 1;
    check("d_fwd_da", __enzyme_fwddiff((void *)solve_d, enzyme_dup, &a, &t), da, 1e-12);
  }
  return failed != 0;
}
