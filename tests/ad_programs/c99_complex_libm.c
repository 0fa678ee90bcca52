/* C99 complex library functions (csqrt, clog, csin, ccos, carg, cabs, cexp): libm has no bitcode
   for them; enzyme-cc calls differentiable textbook versions instead. Reverse and forward mode
   against central finite differences. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

double f(double x, double y) {
  double complex z = x + y * I;
  double complex w = csqrt(z) * clog(z + 1) + csin(z) - ccos(z * z);
  return creal(w) * cimag(w) + carg(w) + cabs(cexp(z));
}

typedef struct { double dx, dy; } G;
G __enzyme_autodiff2(void *, ...) __asm__("__enzyme_autodiff");

int main(void) {
  const double x = 0.7, y = 1.4, h = 1e-6;
  G g = __enzyme_autodiff2((void *)f, x, y);
  check("dfdx", g.dx, (f(x + h, y) - f(x - h, y)) / (2 * h));
  check("dfdy", g.dy, (f(x, y + h) - f(x, y - h)) / (2 * h));
  double vx = 0.3, vy = -1.1;
  check("dot_f", __enzyme_fwddiff((void *)f, x, vx, y, vy), vx * g.dx + vy * g.dy);
  return failed != 0;
}
