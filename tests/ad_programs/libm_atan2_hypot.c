/* Two-argument libm functions atan2 and hypot, both arguments active. */
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
typedef struct { double d0, d1; } D2;
D2 __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

double f_atan2(double y, double x) { return atan2(y, x); }
double f_hypot(double x, double y) { return hypot(x, y); }

int main(void) {
  double a = 0.8, b = -1.3;
  D2 g = __enzyme_autodiff((void *)f_atan2, a, b);
  check("atan2_dy", g.d0, b / (a * a + b * b));
  check("atan2_dx", g.d1, -a / (a * a + b * b));
  D2 h = __enzyme_autodiff((void *)f_hypot, a, b);
  check("hypot_dx", h.d0, a / hypot(a, b));
  check("hypot_dy", h.d1, b / hypot(a, b));
  /* forward/reverse dot test: the tangent along a direction v equals v . gradient */
  const double v0 = sin(1.3), v1 = sin(8.4);
  check("dot_atan2", __enzyme_fwddiff((void *)f_atan2, a, v0, b, v1), v0 * g.d0 + v1 * g.d1);
  check("dot_hypot", __enzyme_fwddiff((void *)f_hypot, a, v0, b, v1), v0 * h.d0 + v1 * h.d1);
  return report();
}
