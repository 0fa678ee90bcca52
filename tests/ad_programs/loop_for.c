/* Counted for loops over arrays: sum of squares and sum of x*sin(x). */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
static void checki(const char *name, int i, double got, double want) {
  char buf[64];
  snprintf(buf, sizeof buf, "%s[%d]", name, i);
  check(buf, got, want);
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }
static double dotp(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

double sumsq(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return s;
}

double xsin(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * sin(x[i]);
  return s;
}

int main(void) {
  enum { N = 7 };
  double x[N], dx[N] = {0};
  for (int i = 0; i < N; i++) x[i] = 0.3 * i - 1;
  double v[N];   /* forward J.v versus v . (reverse gradient) */
  for (int i = 0; i < N; i++) v[i] = rnd(i);
  __enzyme_autodiff((void *)sumsq, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("sumsq", i, dx[i], 2 * x[i]);
  check("dot_sumsq", __enzyme_fwddiff((void *)sumsq, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dx, N));
  for (int i = 0; i < N; i++) dx[i] = 0;
  __enzyme_autodiff((void *)xsin, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("xsin", i, dx[i], sin(x[i]) + x[i] * cos(x[i]));
  check("dot_xsin", __enzyme_fwddiff((void *)xsin, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dx, N));
  return report();
}
