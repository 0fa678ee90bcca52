/* while loops whose trip count depends on the active data: Newton's square root (converges,
   derivative 1/(2 sqrt a)) and repeated multiplication until a threshold. */
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

double newton_sqrt(double a) {
  double y = a;
  while (fabs(y * y - a) > 1e-14 * a) y = 0.5 * (y + a / y);
  return y;
}

double grow(double x) {
  double s = 1;
  while (s < 100) s *= x;
  return s;
}

int main(void) {
  check("newton_2", __enzyme_autodiff((void *)newton_sqrt, 2.0), 0.5 / sqrt(2.0));
  check("newton_9", __enzyme_autodiff((void *)newton_sqrt, 9.0), 1.0 / 6);
  double x = 1.7, s = 1;
  int k = 0;
  while (s < 100) { s *= x; k++; }
  check("grow", __enzyme_autodiff((void *)grow, x), k * pow(x, k - 1));
  /* forward tangent along t versus t * reverse derivative */
  check("dot_newton_2", __enzyme_fwddiff((void *)newton_sqrt, 2.0, rnd(0)),
        rnd(0) * __enzyme_autodiff((void *)newton_sqrt, 2.0));
  check("dot_grow", __enzyme_fwddiff((void *)grow, x, rnd(1)),
        rnd(1) * __enzyme_autodiff((void *)grow, x));
  return report();
}
