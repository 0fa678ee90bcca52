/* Several loop-carried values (phis) updated together: a Fibonacci-like recurrence in x and a
   rotation applied n times. References by central finite differences. */
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
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

double fiblike(double x, int n) {
  double a = 1, b = x;
  for (int i = 0; i < n; i++) {
    double t = a * x + b;
    a = b;
    b = t;
  }
  return b;
}

/* rotate (u, v) n times by angle theta and scale by r, return u */
double rotate(double theta, double r, int n) {
  double u = 1, v = 0;
  for (int i = 0; i < n; i++) {
    double nu = r * (cos(theta) * u - sin(theta) * v);
    double nv = r * (sin(theta) * u + cos(theta) * v);
    u = nu;
    v = nv;
  }
  return u;
}

int main(void) {
  const double h = 1e-6;
  double x = 0.8;
  check("fiblike", __enzyme_autodiff((void *)fiblike, x, 10),
        (fiblike(x + h, 10) - fiblike(x - h, 10)) / (2 * h));
  /* forward tangent along t versus t . (reverse gradient) */
  check("dot_fiblike", __enzyme_fwddiff((void *)fiblike, x, rnd(0), 10),
        rnd(0) * __enzyme_autodiff((void *)fiblike, x, 10));
  double th = 0.3, r = 0.95;
  D2 g = __enzyme_autodiff2((void *)rotate, th, r, 7);
  /* u = r^7 cos(7 theta) */
  check("rotate_dtheta", g.d0, -7 * pow(r, 7) * sin(7 * th));
  check("rotate_dr", g.d1, 7 * pow(r, 6) * cos(7 * th));
  check("dot_rotate", __enzyme_fwddiff((void *)rotate, th, rnd(1), r, rnd(2), 7),
        rnd(1) * g.d0 + rnd(2) * g.d1);
  return report();
}
