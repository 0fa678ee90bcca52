/* Driver of fortran_norm2.f90: reverse mode against central finite differences, forward against
   reverse. Prints `CHECK name got want`. */
#include <math.h>
#include <stdio.h>
void q(double *, int, double *);
void q2(double *, int, double *);
void __enzyme_autodiff(void *, ...);
void __enzyme_fwddiff(void *, ...);
int enzyme_dup, enzyme_const;
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
enum { N = 5 };
static double fd(void (*f)(double *, int, double *), const double *x, int n, int k) {
  double xp[N * N], xm[N * N], rp, rm, h = 1e-6;
  for (int i = 0; i < n; i++) xp[i] = xm[i] = x[i];
  xp[k] += h, xm[k] -= h;
  f(xp, N, &rp), f(xm, N, &rm);
  return (rp - rm) / (2 * h);
}
int main(void) {
  double a[N], da[N] = {0}, r, dr = 1, worst = 0;
  for (int i = 0; i < N; i++) a[i] = 0.3 * i + 0.2;
  __enzyme_autodiff((void *)q, a, da, enzyme_const, N, &r, &dr);
  for (int k = 0; k < N; k++) worst = fmax(worst, fabs(fd(q, a, N, k) - da[k]));
  check("q_grad_err", worst, 0);
  double v[N], tr, dot = 0;
  for (int i = 0; i < N; i++) v[i] = sin(i + 1.0), dot += v[i] * da[i];
  __enzyme_fwddiff((void *)q, a, v, enzyme_const, N, &r, &tr);
  check("dot_q", tr, dot);
  double m[N * N], dm[N * N] = {0};
  worst = 0, dr = 1;
  for (int i = 0; i < N * N; i++) m[i] = 0.1 * i - 0.7;
  __enzyme_autodiff((void *)q2, m, dm, enzyme_const, N, &r, &dr);
  for (int k = 0; k < N * N; k++) worst = fmax(worst, fabs(fd(q2, m, N * N, k) - dm[k]));
  check("q2_grad_err", worst, 0);
  return failed != 0;
}
