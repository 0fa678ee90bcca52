/* libm tanh and erf. */
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
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

double f_tanh(double x) { return tanh(x); }
double f_erf(double x) { return erf(x); }

int main(void) {
  const double pi = 3.14159265358979323846;
  for (int i = 0; i < 3; i++) {
    double x = -0.9 + 0.8 * i;
    double t = tanh(x);
    checki("tanh", i, __enzyme_autodiff((void *)f_tanh, x), 1 - t * t);
    checki("erf", i, __enzyme_autodiff((void *)f_erf, x), 2 / sqrt(pi) * exp(-x * x));
    /* forward tangent along v versus v * reverse derivative */
    double v = rnd(i);
    checki("dot_tanh", i, __enzyme_fwddiff((void *)f_tanh, x, v),
           v * __enzyme_autodiff((void *)f_tanh, x));
    checki("dot_erf", i, __enzyme_fwddiff((void *)f_erf, x, v),
           v * __enzyme_autodiff((void *)f_erf, x));
  }
  return report();
}
