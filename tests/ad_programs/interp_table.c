/* Piecewise-linear interpolation in a constant table, indexed by (int)x: the derivative is the
   slope of the segment; float-to-int conversion must be inactive. */
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

static const double tab[6] = {0.0, 1.0, 0.5, 2.0, 3.5, 3.0};

double interp(double x) {
  int i = (int)x;
  if (i < 0) i = 0;
  if (i > 4) i = 4;
  double f = x - i;
  return tab[i] * (1 - f) + tab[i + 1] * f;
}

double interp_sq(double x) { double y = interp(x); return y * y; }

int main(void) {
  check("seg0", __enzyme_autodiff((void *)interp, 0.3), 1.0);
  check("seg1", __enzyme_autodiff((void *)interp, 1.6), -0.5);
  check("seg3", __enzyme_autodiff((void *)interp, 3.25), 1.5);
  double y = interp(2.5);
  check("sq_seg2", __enzyme_autodiff((void *)interp_sq, 2.5), 2 * y * 1.5);
  /* forward/reverse dot test: the tangent along a direction v equals v * derivative */
  const double v = sin(1.3);
  check("dot_seg1", __enzyme_fwddiff((void *)interp, 1.6, v), v * __enzyme_autodiff((void *)interp, 1.6));
  check("dot_seg3", __enzyme_fwddiff((void *)interp, 3.25, v), v * __enzyme_autodiff((void *)interp, 3.25));
  check("dot_sq_seg2", __enzyme_fwddiff((void *)interp_sq, 2.5, v), v * __enzyme_autodiff((void *)interp_sq, 2.5));
  return report();
}
