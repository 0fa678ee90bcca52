/* Large structs passed by value (byval) to non-inlined callees, built from active values. */
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
int enzyme_dup, enzyme_const, enzyme_width, enzyme_dupv;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
typedef struct { double d[4]; } V4;
V4 __enzyme_fwddiff4(void *, ...) __asm__("__enzyme_fwddiff");
/* deterministic pseudo-random direction entries */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

typedef struct { double a[6]; int n; } Poly;

__attribute__((noinline)) static double eval(Poly p, double x) {
  double r = 0;
  for (int k = p.n - 1; k >= 0; k--) r = r * x + p.a[k];
  return r;
}

double coeff_loss(const double *c, double x) {
  Poly p;
  p.n = 6;
  for (int k = 0; k < 6; k++) p.a[k] = c[k];
  double y = eval(p, x);
  return y * y;
}

int main(void) {
  double c[6] = {1, -0.5, 0.25, 2, -1, 0.5}, dc[6] = {0}, x = 0.8;
  double dx = __enzyme_autodiff((void *)coeff_loss, enzyme_dup, c, dc, x);
  double y = 0, dy = 0;
  for (int k = 5; k >= 0; k--) { dy = dy * x + y; y = y * x + c[k]; }
  for (int k = 0; k < 6; k++) checki("dc", k, dc[k], 2 * y * pow(x, k));
  check("dx", dx, 2 * y * dy);
  /* forward/reverse dot test: the tangent along a direction v equals v . gradient */
  double vc[6], vx = rnd(6), vg = vx * dx;
  for (int k = 0; k < 6; k++) { vc[k] = rnd(k); vg += vc[k] * dc[k]; }
  check("dot_coeff_loss", __enzyme_fwddiff((void *)coeff_loss, enzyme_dup, c, vc, x, vx), vg);
  /* vector forward mode: 4 directions in (c, x), c by dupv, versus 4 width-1 calls */
  double vc4[4][6], vx4[4];
  for (int k = 0; k < 4; k++) {
    vx4[k] = rnd(7 + k);
    for (int i = 0; i < 6; i++) vc4[k][i] = rnd(11 + 6 * k + i);
  }
  V4 t4 = __enzyme_fwddiff4((void *)coeff_loss, enzyme_width, 4, enzyme_dupv, sizeof vc4[0], c, vc4,
                            x, vx4[0], vx4[1], vx4[2], vx4[3]);
  for (int k = 0; k < 4; k++)
    checkv("coeff_loss", k, -1, t4.d[k], __enzyme_fwddiff((void *)coeff_loss, enzyme_dup, c, vc4[k], x, vx4[k]));
  return report();
}
