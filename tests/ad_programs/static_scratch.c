/* A function-local static scratch buffer (a mutable global) written and read inside the
   differentiated function, a common way to avoid allocation in C numerical code. */
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

double scratch_sum(const double *x, int n) {
  static double work[16];
  for (int i = 0; i < n; i++) work[i] = exp(x[i]);
  double s = 0;
  for (int i = 0; i < n; i++) s += work[i] * x[i];
  return s;
}

int main(void) {
  enum { N = 5 };
  double x[N] = {0.5, -1, 2, 0.25, 1.5}, dx[N] = {0};
  __enzyme_autodiff((void *)scratch_sum, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("dx", i, dx[i], exp(x[i]) * (1 + x[i]));
  double v[N];   /* forward J.v versus v . (reverse gradient) */
  for (int i = 0; i < N; i++) v[i] = rnd(i);
  check("dot_scratch_sum", __enzyme_fwddiff((void *)scratch_sum, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dx, N));
  return report();
}
