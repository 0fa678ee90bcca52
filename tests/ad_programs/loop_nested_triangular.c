/* Nested loops with a triangular inner bound (j <= i), linear and nonlinear bodies. */
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

double tri(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) s += x[i] * x[j];
  return s;
}

double tri_sin(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++) s += sin(x[i] - 2 * x[j]) * x[j];
  return s;
}

int main(void) {
  enum { N = 6 };
  double x[N] = {0.5, -1, 2, 0.25, 1.5, -0.75}, dx[N] = {0};
  __enzyme_autodiff((void *)tri, enzyme_dup, x, dx, enzyme_const, N);
  for (int k = 0; k < N; k++) {
    double want = 0;
    for (int j = 0; j <= k; j++) want += x[j];
    for (int i = k; i < N; i++) want += x[i];
    checki("tri", k, dx[k], want);
  }
  double dy[N] = {0};
  __enzyme_autodiff((void *)tri_sin, enzyme_dup, x, dy, enzyme_const, N);
  for (int k = 0; k < N; k++) {
    double want = 0;   /* analytic: terms with i == k, and terms with j == k */
    for (int j = 0; j < k; j++) want += cos(x[k] - 2 * x[j]) * x[j];
    for (int i = k + 1; i < N; i++) want += -2 * cos(x[i] - 2 * x[k]) * x[k] + sin(x[i] - 2 * x[k]);
    checki("tri_sin", k, dy[k], want);
  }
  double v[N];   /* forward J.v versus v . (reverse gradient) */
  for (int i = 0; i < N; i++) v[i] = rnd(i);
  check("dot_tri", __enzyme_fwddiff((void *)tri, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dx, N));
  check("dot_tri_sin", __enzyme_fwddiff((void *)tri_sin, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dy, N));
  return report();
}
