/* Accumulation in long double (x86_fp80) of double data, rounded back to double. */
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

double ld_sumsq(const double *x, int n) {
  long double s = 0;
  for (int i = 0; i < n; i++) s += (long double)x[i] * x[i] * (i + 1);
  return (double)s;
}

int main(void) {
  enum { N = 4 };
  double x[N] = {0.5, -1, 2, 1.5}, dx[N] = {0};
  __enzyme_autodiff((void *)ld_sumsq, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("dx", i, dx[i], 2 * x[i] * (i + 1));
  /* forward J.v versus v . (reverse gradient) */
  double v[N];
  for (int i = 0; i < N; i++) v[i] = rnd(i);
  check("dot_ld_sumsq", __enzyme_fwddiff((void *)ld_sumsq, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dx, N));
  return report();
}
