/* An inner while loop whose trip count depends on the active data, inside an outer for loop:
   per-element Newton square roots (tapes of unknown size per outer iteration). */
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

double sum_sqrt(const double *a, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    double y = a[i] > 1 ? a[i] : 1;
    int it = 0;
    while (fabs(y * y - a[i]) > 1e-13 * a[i] && it < 100) {
      y = 0.5 * (y + a[i] / y);
      it++;
    }
    s += y * (i + 1);
  }
  return s;
}

int main(void) {
  enum { N = 5 };
  double a[N] = {2, 0.25, 9, 1e4, 3.5}, da[N] = {0};
  __enzyme_autodiff((void *)sum_sqrt, enzyme_dup, a, da, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("da", i, da[i], (i + 1) * 0.5 / sqrt(a[i]));
  double v[N];   /* forward J.v versus v . (reverse gradient) */
  for (int i = 0; i < N; i++) v[i] = rnd(i);
  check("dot_sum_sqrt", __enzyme_fwddiff((void *)sum_sqrt, enzyme_dup, a, v, enzyme_const, N),
        dotp(v, da, N));
  return report();
}
