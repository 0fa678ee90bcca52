/* Small structs returned by value from non-inlined callees (complex multiply in {double,double}
   registers) and a 3-double struct returned through sret. */
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
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

typedef struct { double re, im; } cplx;
typedef struct { double x, y, z; } vec3;

__attribute__((noinline)) static cplx cmul(cplx a, cplx b) {
  cplx r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  return r;
}

__attribute__((noinline)) static vec3 cross(vec3 a, vec3 b) {
  vec3 r = {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
  return r;
}

/* |z^3|^2 real part etc: f = Re(z^3) with z = x + i y */
double re_cube(double x, double y) {
  cplx z = {x, y};
  cplx z3 = cmul(cmul(z, z), z);
  return z3.re;
}

/* f = (a x b) . (1, 2, 3) with a = (x, y, 1), b = (y, 1, x) */
double cross_dot(double x, double y) {
  vec3 a = {x, y, 1}, b = {y, 1, x};
  vec3 c = cross(a, b);
  return c.x + 2 * c.y + 3 * c.z;
}

int main(void) {
  double x = 0.6, y = -1.3;
  D2 g = __enzyme_autodiff((void *)re_cube, x, y);
  /* Re((x+iy)^3) = x^3 - 3 x y^2 */
  check("re_cube_dx", g.dx, 3 * x * x - 3 * y * y);
  check("re_cube_dy", g.dy, -6 * x * y);
  /* forward tangent along t versus t . (reverse gradient) */
  const double tx = rnd(0), ty = rnd(1);
  check("dot_re_cube", __enzyme_fwddiff((void *)re_cube, x, tx, y, ty), tx * g.dx + ty * g.dy);
  /* a x b = (y*x - 1, y - x*x, x - y*y) -> f = xy - 1 + 2y - 2x^2 + 3x - 3y^2 */
  g = __enzyme_autodiff((void *)cross_dot, x, y);
  check("cross_dx", g.dx, y - 4 * x + 3);
  check("cross_dy", g.dy, x + 2 - 6 * y);
  check("dot_cross", __enzyme_fwddiff((void *)cross_dot, x, tx, y, ty), tx * g.dx + ty * g.dy);
  return report();
}
