/* C99 _Complex double arithmetic (multiplication lowers to a __muldc3 call at -O0/-O2 without
   -ffast-math), differentiated with respect to the real and imaginary parts. */
#include <complex.h>
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

double re_cube(double x, double y) {
  double complex z = x + y * I;
  double complex z3 = z * z * z;
  return creal(z3);
}

double abs_sq_exp(double x, double y) {
  double complex z = cexp(x + y * I);
  return creal(z) * creal(z) + cimag(z) * cimag(z);   /* |e^z|^2 = e^{2x} */
}

int main(void) {
  double x = 0.6, y = -1.3;
  D2 g = __enzyme_autodiff((void *)re_cube, x, y);
  check("re_cube_dx", g.dx, 3 * x * x - 3 * y * y);
  check("re_cube_dy", g.dy, -6 * x * y);
  g = __enzyme_autodiff((void *)abs_sq_exp, x, y);
  check("abs_exp_dx", g.dx, 2 * exp(2 * x));
  check("abs_exp_dy", g.dy, 0.0);
  /* forward/reverse dot test: the tangent along a direction v equals v . gradient */
  const double vx = sin(1.3), vy = sin(8.4);
  g = __enzyme_autodiff((void *)re_cube, x, y);
  check("dot_re_cube", __enzyme_fwddiff((void *)re_cube, x, vx, y, vy), vx * g.dx + vy * g.dy);
  g = __enzyme_autodiff((void *)abs_sq_exp, x, y);
  check("dot_abs_sq_exp", __enzyme_fwddiff((void *)abs_sq_exp, x, vx, y, vy), vx * g.dx + vy * g.dy);
  return report();
}
