/* if / else-if / else chains, each branch a different formula; an if without else. */
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
typedef struct { double dx, dlo; } D2;
double __enzyme_autodiff(void *, ...);
D2 __enzyme_autodiff2(void *, ...);
double __enzyme_fwddiff(void *, ...);

double piecewise(double x) {
  double r;
  if (x < 1.0) {
    r = x * x;
  } else if (x < 2.0) {
    r = 3 * x - 2;
  } else {
    r = log(x) * x;
  }
  return r;
}

/* below lo the slope is halved: y = lo + (x - lo)/2 */
double clampsq(double x, double lo) {
  double y = x;
  if (y < lo) y = lo + 0.5 * (y - lo);
  return y * y;
}

int main(void) {
  check("piece_0.5", __enzyme_autodiff((void *)piecewise, 0.5), 1.0);
  check("piece_1.5", __enzyme_autodiff((void *)piecewise, 1.5), 3.0);
  check("piece_3", __enzyme_autodiff((void *)piecewise, 3.0), log(3.0) + 1);
  double y = 1.0 + 0.5 * (0.2 - 1.0);
  D2 g = __enzyme_autodiff2((void *)clampsq, 0.2, 1.0);
  check("clamp_dx", g.dx, 2 * y * 0.5);
  check("clamp_dlo", g.dlo, 2 * y * 0.5);
  g = __enzyme_autodiff2((void *)clampsq, 1.5, 1.0);
  check("noclamp_dx", g.dx, 3.0);
  check("noclamp_dlo", g.dlo, 0.0);
  /* forward/reverse dot test: the tangent along a direction v equals v . gradient */
  const double v0 = sin(1.3), v1 = sin(8.4);
  check("dot_piece_0.5", __enzyme_fwddiff((void *)piecewise, 0.5, v0), v0 * __enzyme_autodiff((void *)piecewise, 0.5));
  check("dot_piece_1.5", __enzyme_fwddiff((void *)piecewise, 1.5, v0), v0 * __enzyme_autodiff((void *)piecewise, 1.5));
  check("dot_piece_3", __enzyme_fwddiff((void *)piecewise, 3.0, v0), v0 * __enzyme_autodiff((void *)piecewise, 3.0));
  g = __enzyme_autodiff2((void *)clampsq, 0.2, 1.0);
  check("dot_clamp", __enzyme_fwddiff((void *)clampsq, 0.2, v0, 1.0, v1), v0 * g.dx + v1 * g.dlo);
  g = __enzyme_autodiff2((void *)clampsq, 1.5, 1.0);
  check("dot_noclamp", __enzyme_fwddiff((void *)clampsq, 1.5, v0, 1.0, v1), v0 * g.dx + v1 * g.dlo);
  return report();
}
