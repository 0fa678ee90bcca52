/* C99 _Complex float arithmetic: multiplication and division lower to __mulsc3 / __divsc3 calls
   (returning <2 x float> on x86-64) at -O0 and -O2 without -ffast-math; differentiated with
   respect to the real and imaginary parts, against the analytic derivative in double. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 2e-4 * (1.0 + fabs(want));
  printf("CHECK %s %.9g %.9g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
typedef struct { float dx, dy; } D2;
D2 __enzyme_autodiff(void *, ...);
float __enzyme_fwddiff(void *, ...);

/* Re(z^3) with z = x + iy: 3x^2 - 3y^2 and -6xy */
float re_cube(float x, float y) {
  float complex z = x + y * I;
  return crealf(z * z * z);
}

/* Im(1 / z) = -y / (x^2 + y^2) */
float im_inverse(float x, float y) {
  float complex z = x + y * I;
  return cimagf(1.0f / z);
}

/* Re(z / w) with w = 2 + x i: (2x + xy) / (4 + x^2) */
float re_quotient(float x, float y) {
  float complex z = x + y * I, w = 2.0f + x * I;
  return crealf(z / w);
}

int main(void) {
  float x = 0.6f, y = -1.3f;
  double xd = x, yd = y, r2 = xd * xd + yd * yd;
  D2 g = __enzyme_autodiff((void *)re_cube, x, y);
  check("re_cube_dx", g.dx, 3 * xd * xd - 3 * yd * yd);
  check("re_cube_dy", g.dy, -6 * xd * yd);
  g = __enzyme_autodiff((void *)im_inverse, x, y);
  check("im_inverse_dx", g.dx, 2 * xd * yd / (r2 * r2));
  check("im_inverse_dy", g.dy, -1 / r2 + 2 * yd * yd / (r2 * r2));
  g = __enzyme_autodiff((void *)re_quotient, x, y);
  double num = 2 * xd + xd * yd, den = 4 + xd * xd;
  check("re_quotient_dx", g.dx, (2 + yd) / den - num * 2 * xd / (den * den));
  check("re_quotient_dy", g.dy, xd / den);
  /* forward mode along (1, 0) and (0, 1) against the reverse gradient */
  check("fwd_re_quotient_dx", __enzyme_fwddiff((void *)re_quotient, x, 1.0f, y, 0.0f), g.dx);
  check("fwd_re_quotient_dy", __enzyme_fwddiff((void *)re_quotient, x, 0.0f, y, 1.0f), g.dy);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
