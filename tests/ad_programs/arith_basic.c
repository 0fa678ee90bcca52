/* Straight-line arithmetic: + - * / and negation, two active scalars -> {dx, dy}. */
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
/* deterministic pseudo-random direction entries */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

/* f = x*y + x/y - y + 3*(-x) - y*y/x */
double f(double x, double y) { return x * y + x / y - y + 3.0 * (-x) - y * y / x; }

int main(void) {
  double x = 1.5, y = -0.75;
  D2 g = __enzyme_autodiff((void *)f, x, y);
  check("df_dx", g.dx, y + 1 / y - 3 + y * y / (x * x));
  check("df_dy", g.dy, x - x / (y * y) - 1 - 2 * y / x);
  /* forward/reverse dot test: the tangent along v equals v . gradient */
  double vx = rnd(0), vy = rnd(1);
  check("dot_f", __enzyme_fwddiff((void *)f, x, vx, y, vy), vx * g.dx + vy * g.dy);
  return report();
}
