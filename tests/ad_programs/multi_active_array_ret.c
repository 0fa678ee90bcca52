/* Four active scalars whose derivatives are received in a struct wrapping an array
   (struct { double d[4]; }), returned through sret. */
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
typedef struct { double d[4]; } Grad4;
Grad4 __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

double f4(double a, double b, double c, double d) { return a * b - c * d + a * a * d; }

int main(void) {
  Grad4 h = __enzyme_autodiff((void *)f4, 1.0, 2.0, 3.0, 4.0);
  check("da", h.d[0], 2.0 + 2 * 1.0 * 4.0);
  check("db", h.d[1], 1.0);
  check("dc", h.d[2], -4.0);
  check("dd", h.d[3], -3.0 + 1.0);
  /* forward tangent along t versus t . (reverse gradient) */
  double t[4] = {rnd(0), rnd(1), rnd(2), rnd(3)};
  check("dot_f4", __enzyme_fwddiff((void *)f4, 1.0, t[0], 2.0, t[1], 3.0, t[2], 4.0, t[3]),
        t[0] * h.d[0] + t[1] * h.d[1] + t[2] * h.d[2] + t[3] * h.d[3]);
  return report();
}
