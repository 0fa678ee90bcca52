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
/* vector forward mode: lane k (entry i >= 0) of a width-N call versus a width-1 call */
static void checkv(const char *name, int lane, int i, double got, double want) {
  char buf[64];
  if (i < 0) snprintf(buf, sizeof buf, "vec_%s_%d", name, lane);
  else snprintf(buf, sizeof buf, "vec_%s_%d_%d", name, lane, i);
  check(buf, got, want);
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
typedef struct { double dx, dy; } D2;
D2 __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
int enzyme_width;
typedef struct { double d[4]; } V4;
V4 __enzyme_fwddiff4(void *, ...) __asm__("__enzyme_fwddiff");
typedef struct { double d[2]; } V2;
V2 __enzyme_fwddiff2(void *, ...) __asm__("__enzyme_fwddiff");

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
  /* vector forward mode: 4 (then 2) directions in (x, y) versus one width-1 call each */
  const double ux[4] = {1, 0, sin(15.5), sin(29.7)}, uy[4] = {0, 1, sin(22.6), sin(36.8)};
  V4 t4 = __enzyme_fwddiff4((void *)re_cube, enzyme_width, 4, x, ux[0], ux[1], ux[2], ux[3],
                            y, uy[0], uy[1], uy[2], uy[3]);
  for (int k = 0; k < 4; k++)
    checkv("re_cube", k, -1, t4.d[k], __enzyme_fwddiff((void *)re_cube, x, ux[k], y, uy[k]));
  V2 t2 = __enzyme_fwddiff2((void *)abs_sq_exp, enzyme_width, 2, x, ux[2], ux[3], y, uy[2], uy[3]);
  for (int k = 0; k < 2; k++)
    checkv("abs_sq_exp", k, -1, t2.d[k], __enzyme_fwddiff((void *)abs_sq_exp, x, ux[2 + k], y, uy[2 + k]));
  return report();
}
