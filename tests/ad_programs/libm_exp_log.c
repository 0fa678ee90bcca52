/* libm exp, log, expm1, log1p. */
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

double f_exp(double x) { return exp(x); }
double f_log(double x) { return log(x); }
double f_expm1(double x) { return expm1(x); }
double f_log1p(double x) { return log1p(x); }
double f_softplus(double x) { return log(1 + exp(x)); }

int main(void) {
  double x = 0.8;
  check("exp", __enzyme_autodiff((void *)f_exp, x), exp(x));
  check("log", __enzyme_autodiff((void *)f_log, x), 1 / x);
  check("expm1", __enzyme_autodiff((void *)f_expm1, x), exp(x));
  check("log1p", __enzyme_autodiff((void *)f_log1p, x), 1 / (1 + x));
  check("softplus", __enzyme_autodiff((void *)f_softplus, x), 1 / (1 + exp(-x)));
  /* forward/reverse dot test: the tangent along a direction v equals v * derivative */
  const double v = sin(1.3);
#define DOT(name, f) check("dot_" name, __enzyme_fwddiff((void *)f, x, v), v * __enzyme_autodiff((void *)f, x))
  DOT("exp", f_exp);
  DOT("log", f_log);
  DOT("expm1", f_expm1);
  DOT("log1p", f_log1p);
  DOT("softplus", f_softplus);
  return report();
}
