/* fma() called explicitly, and floor/ceil/round (zero derivative) mixed with active terms. */
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
int enzyme_dup;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

double f_fma(const double *v) { return fma(v[0], v[1], v[2] * v[2]); }
double f_floor(double x) { return x * floor(x) + ceil(x) * x * x + round(x); }

int main(void) {
  double v[3] = {1.5, -2, 0.5}, dv[3] = {0};
  __enzyme_autodiff((void *)f_fma, enzyme_dup, v, dv);
  check("fma_d0", dv[0], v[1]);
  check("fma_d1", dv[1], v[0]);
  check("fma_d2", dv[2], 2 * v[2]);
  /* forward J.t against reverse t.grad */
  double t[3] = {rnd(0), rnd(1), rnd(2)};
  check("dot_fma", __enzyme_fwddiff((void *)f_fma, enzyme_dup, v, t),
        t[0] * dv[0] + t[1] * dv[1] + t[2] * dv[2]);
  double x = 2.3;
  check("floor_ceil", __enzyme_autodiff((void *)f_floor, x), floor(x) + 2 * ceil(x) * x);
  check("dot_floor_ceil", __enzyme_fwddiff((void *)f_floor, x, rnd(3)),
        rnd(3) * __enzyme_autodiff((void *)f_floor, x));
  return report();
}
