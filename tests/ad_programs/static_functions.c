/* static helper functions (internal linkage, likely inlined) called several times. */
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

static double sq(double x) { return x * x; }
static double smooth_abs(double x) { return sqrt(sq(x) + 1e-2); }
static double combine(double a, double b) { return smooth_abs(a - b) + sq(a) * b; }

double f(double x) { return combine(x, 0.5) + combine(2 * x, x) + sq(sq(x)); }

int main(void) {
  const double h = 1e-6;
  for (int k = 0; k < 3; k++) {
    double x = -0.8 + 0.9 * k;
    checki("f", k, __enzyme_autodiff((void *)f, x), (f(x + h) - f(x - h)) / (2 * h));
    /* forward tangent along t versus t * reverse derivative */
    checki("dot_f", k, __enzyme_fwddiff((void *)f, x, rnd(k)),
           rnd(k) * __enzyme_autodiff((void *)f, x));
  }
  return report();
}
