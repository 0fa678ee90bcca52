/* Non-smooth libm functions fabs, fmax, fmin (away from their kinks). */
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
double __enzyme_autodiff(void *, ...);
D2 __enzyme_autodiff2(void *, ...);
double __enzyme_fwddiff(void *, ...);

double f_fabs(double x) { return fabs(x) * x; }
double f_fmax(double x, double y) { return fmax(x, y) * 2.0; }
double f_fmin(double x, double y) { return fmin(x, y) * 3.0; }

int main(void) {
  check("fabs_neg", __enzyme_autodiff((void *)f_fabs, -1.5), 3.0);
  check("fabs_pos", __enzyme_autodiff((void *)f_fabs, 2.0), 4.0);
  D2 g = __enzyme_autodiff2((void *)f_fmax, 1.0, 2.0);
  check("fmax_dx", g.d0, 0.0);
  check("fmax_dy", g.d1, 2.0);
  g = __enzyme_autodiff2((void *)f_fmax, 3.0, 2.0);
  check("fmax_dx2", g.d0, 2.0);
  check("fmax_dy2", g.d1, 0.0);
  g = __enzyme_autodiff2((void *)f_fmin, 1.0, 2.0);
  check("fmin_dx", g.d0, 3.0);
  check("fmin_dy", g.d1, 0.0);
  /* forward/reverse dot test: the tangent along a direction v equals v . gradient */
  const double v0 = sin(1.3), v1 = sin(8.4);
  check("dot_fabs_neg", __enzyme_fwddiff((void *)f_fabs, -1.5, v0), v0 * __enzyme_autodiff((void *)f_fabs, -1.5));
  g = __enzyme_autodiff2((void *)f_fmax, 1.0, 2.0);
  check("dot_fmax", __enzyme_fwddiff((void *)f_fmax, 1.0, v0, 2.0, v1), v0 * g.d0 + v1 * g.d1);
  g = __enzyme_autodiff2((void *)f_fmax, 3.0, 2.0);
  check("dot_fmax2", __enzyme_fwddiff((void *)f_fmax, 3.0, v0, 2.0, v1), v0 * g.d0 + v1 * g.d1);
  g = __enzyme_autodiff2((void *)f_fmin, 1.0, 2.0);
  check("dot_fmin", __enzyme_fwddiff((void *)f_fmin, 1.0, v0, 2.0, v1), v0 * g.d0 + v1 * g.d1);
  return report();
}
