/* libm pow (active base, active exponent), sqrt, cbrt. */
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
typedef struct { double dx, dy; } D2;
double __enzyme_autodiff(void *, ...);
D2 __enzyme_autodiff2(void *, ...);
double __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }
/* forward tangent along t versus t * reverse derivative */
#define DOT(name, f, x, t) \
  check("dot_" name, __enzyme_fwddiff((void *)f, x, t), (t) * __enzyme_autodiff((void *)f, x))

double f_sqrt(double x) { return sqrt(x); }
double f_cbrt(double x) { return cbrt(x); }
double f_pow_const(double x) { return pow(x, 2.5); }
double f_pow(double x, double y) { return pow(x, y); }

int main(void) {
  double x = 1.7, y = 0.6;
  check("sqrt", __enzyme_autodiff((void *)f_sqrt, x), 0.5 / sqrt(x));
  check("cbrt", __enzyme_autodiff((void *)f_cbrt, x), 1 / (3 * cbrt(x) * cbrt(x)));
  check("pow_x_2.5", __enzyme_autodiff((void *)f_pow_const, x), 2.5 * pow(x, 1.5));
  D2 g = __enzyme_autodiff2((void *)f_pow, x, y);
  check("pow_dx", g.dx, y * pow(x, y - 1));
  check("pow_dy", g.dy, pow(x, y) * log(x));
  DOT("sqrt", f_sqrt, x, rnd(0));
  DOT("cbrt", f_cbrt, x, rnd(1));
  DOT("pow_x_2.5", f_pow_const, x, rnd(2));
  check("dot_pow", __enzyme_fwddiff((void *)f_pow, x, rnd(3), y, rnd(4)),
        rnd(3) * g.dx + rnd(4) * g.dy);
  return report();
}
