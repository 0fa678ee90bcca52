/* Recursive power: linear x * pow(x, n-1) and by squaring. d/dx x^n = n x^(n-1). */
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
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }
/* forward tangent along t versus t * reverse derivative */
#define DOT(name, f, x, n, t) \
  check("dot_" name, __enzyme_fwddiff((void *)f, x, t, n), (t) * __enzyme_autodiff((void *)f, x, n))

double rpow(double x, int n) { return n == 0 ? 1.0 : x * rpow(x, n - 1); }

double spow(double x, int n) {
  if (n == 0) return 1.0;
  double h = spow(x, n / 2);
  return n % 2 ? h * h * x : h * h;
}

int main(void) {
  double x = 1.1;
  check("rpow_5", __enzyme_autodiff((void *)rpow, x, 5), 5 * pow(x, 4));
  check("rpow_0", __enzyme_autodiff((void *)rpow, x, 0), 0.0);
  check("spow_13", __enzyme_autodiff((void *)spow, x, 13), 13 * pow(x, 12));
  check("spow_8", __enzyme_autodiff((void *)spow, x, 8), 8 * pow(x, 7));
  DOT("rpow_5", rpow, x, 5, rnd(0));
  DOT("rpow_0", rpow, x, 0, rnd(1));
  DOT("spow_13", spow, x, 13, rnd(2));
  DOT("spow_8", spow, x, 8, rnd(3));
  return report();
}
