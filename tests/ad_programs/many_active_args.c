/* Eight active double arguments: a large struct of derivatives returned through sret. */
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
typedef struct { double d[8]; } G8;
typedef struct { double a, b, c, d, e, f, g, h; } N8;
G8 __enzyme_autodiff(void *, ...);
N8 __enzyme_autodiff_named(void *, ...);
double __enzyme_fwddiff(void *, ...);
int enzyme_width;
typedef struct { double d[4]; } V4;
V4 __enzyme_fwddiff4(void *, ...) __asm__("__enzyme_fwddiff");
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

double f8(double a, double b, double c, double d, double e, double f, double g, double h) {
  return a * b + c * d * e + sin(f) * g - h * h * a;
}

int main(void) {
  double v[8] = {0.5, -1, 2, 0.25, 1.5, -0.5, 0.75, 1.25};
  double want[8] = {v[1] - v[7] * v[7], v[0], v[3] * v[4], v[2] * v[4], v[2] * v[3],
                    cos(v[5]) * v[6], sin(v[5]), -2 * v[7] * v[0]};
  G8 g = __enzyme_autodiff((void *)f8, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
  for (int i = 0; i < 8; i++) checki("array", i, g.d[i], want[i]);
  N8 n = __enzyme_autodiff_named((void *)f8, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
  double got[8] = {n.a, n.b, n.c, n.d, n.e, n.f, n.g, n.h};
  for (int i = 0; i < 8; i++) checki("named", i, got[i], want[i]);
  /* forward tangent along t versus t . (reverse gradient) */
  double t[8], tg = 0;
  for (int i = 0; i < 8; i++) t[i] = rnd(i), tg += t[i] * g.d[i];
  check("dot_f8",
        __enzyme_fwddiff((void *)f8, v[0], t[0], v[1], t[1], v[2], t[2], v[3], t[3], v[4], t[4],
                         v[5], t[5], v[6], t[6], v[7], t[7]),
        tg);
  /* vector forward mode: 4 directions (u[k][i] for argument i) versus 4 width-1 calls */
  double u[4][8];
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < 8; i++) u[k][i] = rnd(8 + 8 * k + i);
#define U(i) u[0][i], u[1][i], u[2][i], u[3][i]
  V4 t4 = __enzyme_fwddiff4((void *)f8, enzyme_width, 4, v[0], U(0), v[1], U(1), v[2], U(2), v[3], U(3),
                            v[4], U(4), v[5], U(5), v[6], U(6), v[7], U(7));
  for (int k = 0; k < 4; k++)
    checkv("f8", k, -1, t4.d[k],
           __enzyme_fwddiff((void *)f8, v[0], u[k][0], v[1], u[k][1], v[2], u[k][2], v[3], u[k][3],
                            v[4], u[k][4], v[5], u[k][5], v[6], u[k][6], v[7], u[k][7]));
  return report();
}
