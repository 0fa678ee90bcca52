/* A long nonlinear iteration x <- sin(x) + c*x whose every iterate is needed in the reverse
   pass (a tape of n values); dx_n/dx_0 = prod_k (cos(x_k) + c). */
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
int enzyme_const, enzyme_width;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
typedef struct { double d[4]; } V4;
V4 __enzyme_fwddiff4(void *, ...) __asm__("__enzyme_fwddiff");
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

double iterate(double x, double c, int n) {
  for (int i = 0; i < n; i++) x = sin(x) + c * x;
  return x;
}

static double reference(double x, double c, int n) {
  double d = 1;
  for (int i = 0; i < n; i++) {
    d *= cos(x) + c;
    x = sin(x) + c * x;
  }
  return d;
}

int main(void) {
  double c = 0.5;
  check("iterate1000_dx", __enzyme_autodiff((void *)iterate, 0.9, enzyme_const, c, 1000),
        reference(0.9, c, 1000));
  check("iterate37_dx", __enzyme_autodiff((void *)iterate, 0.9, enzyme_const, c, 37),
        reference(0.9, c, 37));
  /* forward tangent along t versus t * reverse derivative (divided by the tiny reference
     derivative ~1e-26 so that the absolute tolerance means something) */
  const double r37 = reference(0.9, c, 37), t = rnd(0);
  check("dot_iterate37", __enzyme_fwddiff((void *)iterate, 0.9, t, enzyme_const, c, 37) / r37,
        t * __enzyme_autodiff((void *)iterate, 0.9, enzyme_const, c, 37) / r37);
  check("dot_iterate5", __enzyme_fwddiff((void *)iterate, 0.9, t, enzyme_const, c, 5),
        t * __enzyme_autodiff((void *)iterate, 0.9, enzyme_const, c, 5));
  /* vector forward mode: 4 directions in (x, c) at once versus 4 width-1 calls */
  V4 t4 = __enzyme_fwddiff4((void *)iterate, enzyme_width, 4, 0.9, rnd(1), rnd(2), rnd(3), rnd(4),
                            c, rnd(5), rnd(6), rnd(7), rnd(8), 5);
  for (int k = 0; k < 4; k++)
    checkv("iterate5", k, -1, t4.d[k], __enzyme_fwddiff((void *)iterate, 0.9, rnd(1 + k), c, rnd(5 + k), 5));
  return report();
}
