/* libm sin, cos, tan. */
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
#define DOT(name, f, x, t) \
  check("dot_" name, __enzyme_fwddiff((void *)f, x, t), (t) * __enzyme_autodiff((void *)f, x))

double f_sin(double x) { return sin(x); }
double f_cos(double x) { return cos(x); }
double f_tan(double x) { return tan(x); }
double f_mix(double x) { return sin(x) * cos(2 * x); }

int main(void) {
  double x = 0.7;
  check("sin", __enzyme_autodiff((void *)f_sin, x), cos(x));
  check("cos", __enzyme_autodiff((void *)f_cos, x), -sin(x));
  check("tan", __enzyme_autodiff((void *)f_tan, x), 1 / (cos(x) * cos(x)));
  check("sin_cos2x", __enzyme_autodiff((void *)f_mix, x), cos(x) * cos(2 * x) - 2 * sin(x) * sin(2 * x));
  DOT("sin", f_sin, x, rnd(0));
  DOT("cos", f_cos, x, rnd(1));
  DOT("tan", f_tan, x, rnd(2));
  DOT("sin_cos2x", f_mix, x, rnd(3));
  return report();
}
