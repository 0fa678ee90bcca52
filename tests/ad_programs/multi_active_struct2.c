/* Two active scalars: __enzyme_autodiff returns the struct {double, double} of derivatives. */
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
D2 __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

double rosenbrock(double x, double y) { return (1 - x) * (1 - x) + 100 * (y - x * x) * (y - x * x); }
double polar_r(double x, double y) { return sqrt(x * x + y * y) * exp(-0.5 * y); }

int main(void) {
  double x = -1.2, y = 1.0;
  const double tx = rnd(0), ty = rnd(1);   /* tangent for the forward/reverse dot tests */
  D2 g = __enzyme_autodiff((void *)rosenbrock, x, y);
  check("rosen_dx", g.dx, -2 * (1 - x) - 400 * x * (y - x * x));
  check("rosen_dy", g.dy, 200 * (y - x * x));
  check("dot_rosen", __enzyme_fwddiff((void *)rosenbrock, x, tx, y, ty), tx * g.dx + ty * g.dy);
  double r = sqrt(x * x + y * y), e = exp(-0.5 * y);
  g = __enzyme_autodiff((void *)polar_r, x, y);
  check("polar_dx", g.dx, x / r * e);
  check("polar_dy", g.dy, y / r * e - 0.5 * r * e);
  check("dot_polar", __enzyme_fwddiff((void *)polar_r, x, tx, y, ty), tx * g.dx + ty * g.dy);
  return report();
}
