/* Three and four active scalars: the struct of derivatives is returned through sret memory. */
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
typedef struct { double dx, dy, dz; } D3;
typedef struct { double da, db, dc, dd; } D4;
D3 __enzyme_autodiff(void *, ...);
D4 __enzyme_autodiff4(void *, ...);
double __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

double f3(double x, double y, double z) { return x * y * z + sin(x) * z * z; }
double f4(double a, double b, double c, double d) { return a * b - c * d + a * a * d; }

int main(void) {
  double x = 0.5, y = -1.5, z = 2.0;
  D3 g = __enzyme_autodiff((void *)f3, x, y, z);
  check("f3_dx", g.dx, y * z + cos(x) * z * z);
  check("f3_dy", g.dy, x * z);
  check("f3_dz", g.dz, x * y + 2 * sin(x) * z);
  /* forward tangent along t versus t . (reverse gradient) */
  double t[4] = {rnd(0), rnd(1), rnd(2), rnd(3)};
  check("dot_f3", __enzyme_fwddiff((void *)f3, x, t[0], y, t[1], z, t[2]),
        t[0] * g.dx + t[1] * g.dy + t[2] * g.dz);
  D4 h = __enzyme_autodiff4((void *)f4, 1.0, 2.0, 3.0, 4.0);
  check("f4_da", h.da, 2.0 + 2 * 1.0 * 4.0);
  check("f4_db", h.db, 1.0);
  check("f4_dc", h.dc, -4.0);
  check("f4_dd", h.dd, -3.0 + 1.0);
  check("dot_f4", __enzyme_fwddiff((void *)f4, 1.0, t[0], 2.0, t[1], 3.0, t[2], 4.0, t[3]),
        t[0] * h.da + t[1] * h.db + t[2] * h.dc + t[3] * h.dd);
  return report();
}
