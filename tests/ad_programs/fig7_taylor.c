/* Paper Figure 7: a Taylor-series loop, sum_{i=1..n} x^i / i, with n = 10^6 iterations.
   d/dx = sum_{i=1..n} x^(i-1) = (1 - x^n) / (1 - x). */
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
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

double taylor(double x, int n) {
  double sum = 0;
  for (int i = 1; i <= n; i++) sum += pow(x, i) / i;
  return sum;
}

int main(void) {
  int n = 1000000;
  double x = 0.5;
  check("taylor_0.5", __enzyme_autodiff((void *)taylor, x, n), (1 - pow(x, n)) / (1 - x));
  x = -0.75;
  check("taylor_-0.75", __enzyme_autodiff((void *)taylor, x, n), (1 - pow(x, n)) / (1 - x));
  /* forward/reverse dot test: the tangent along a direction v equals v * derivative */
  const double v = sin(1.3);
  check("dot_taylor_-0.75", __enzyme_fwddiff((void *)taylor, x, v, n), v * __enzyme_autodiff((void *)taylor, x, n));
  return report();
}
