/* Two consecutive loops over the same array (two-pass variance: the mean, then the centered
   sum of squares), and a dot product followed by a sum of squares. */
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

double variance2(const double *x, int n) {
  double mean = 0;
  for (int i = 0; i < n; i++) mean += x[i];
  mean /= n;
  double v = 0;
  for (int i = 0; i < n; i++) v += (x[i] - mean) * (x[i] - mean);
  return v / n;
}

double two_sums(const double *x, int n) {
  double a = 0, b = 0;
  for (int i = 0; i < n; i++) a += x[i] * x[i];
  for (int i = 0; i < n; i++) b += x[i];
  return a * b;
}

int main(void) {
  enum { N = 5 };
  double x[N] = {1.5, -0.5, 2, 0.8, 1.1}, dx[N] = {0};
  double mean = 0, a = 0, b = 0;
  double v[N];   /* forward J.v versus v . (reverse gradient) */
  for (int i = 0; i < N; i++) v[i] = rnd(i);
  for (int i = 0; i < N; i++) { mean += x[i] / N; a += x[i] * x[i]; b += x[i]; }
  __enzyme_autodiff((void *)variance2, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("variance2", i, dx[i], 2 * (x[i] - mean) / N);
  check("dot_variance2", __enzyme_fwddiff((void *)variance2, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dx, N));
  for (int i = 0; i < N; i++) dx[i] = 0;
  __enzyme_autodiff((void *)two_sums, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("two_sums", i, dx[i], 2 * x[i] * b + a);
  check("dot_two_sums", __enzyme_fwddiff((void *)two_sums, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dx, N));
  return report();
}
