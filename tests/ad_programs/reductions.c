/* Reductions: product, max by comparison, mean/variance with two accumulators, log-sum-exp. */
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

double prod(const double *x, int n) {
  double p = 1;
  for (int i = 0; i < n; i++) p *= x[i];
  return p;
}

double maxval(const double *x, int n) {
  double m = x[0];
  for (int i = 1; i < n; i++)
    if (x[i] > m) m = x[i];
  return m;
}

double variance(const double *x, int n) {
  double s = 0, s2 = 0;
  for (int i = 0; i < n; i++) {
    s += x[i];
    s2 += x[i] * x[i];
  }
  double mean = s / n;
  return s2 / n - mean * mean;
}

double logsumexp(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += exp(x[i]);
  return log(s);
}

static void zero(double *d, int n) { for (int i = 0; i < n; i++) d[i] = 0; }

int main(void) {
  enum { N = 5 };
  double x[N] = {1.5, -0.5, 2, 0.8, 1.1}, dx[N] = {0};
  double v[N];   /* forward J.v versus v . (reverse gradient) */
  for (int i = 0; i < N; i++) v[i] = rnd(i);
  double p = prod(x, N);
  __enzyme_autodiff((void *)prod, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("prod", i, dx[i], p / x[i]);
  check("dot_prod", __enzyme_fwddiff((void *)prod, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dx, N));
  zero(dx, N);
  __enzyme_autodiff((void *)maxval, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("max", i, dx[i], i == 2 ? 1.0 : 0.0);
  check("dot_max", __enzyme_fwddiff((void *)maxval, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dx, N));
  zero(dx, N);
  double mean = 0;
  for (int i = 0; i < N; i++) mean += x[i] / N;
  __enzyme_autodiff((void *)variance, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("variance", i, dx[i], 2 * (x[i] - mean) / N);
  check("dot_variance", __enzyme_fwddiff((void *)variance, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dx, N));
  zero(dx, N);
  double se = 0;
  for (int i = 0; i < N; i++) se += exp(x[i]);
  __enzyme_autodiff((void *)logsumexp, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("logsumexp", i, dx[i], exp(x[i]) / se);
  check("dot_logsumexp", __enzyme_fwddiff((void *)logsumexp, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dx, N));
  return report();
}
