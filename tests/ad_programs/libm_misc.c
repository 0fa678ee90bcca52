/* More libm: log10 log2 exp2 sinh cosh asin acos atan copysign ldexp fmod. */
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

double f_log10(double x) { return log10(x); }
double f_log2(double x) { return log2(x); }
double f_exp2(double x) { return exp2(x); }
double f_sinh(double x) { return sinh(x); }
double f_cosh(double x) { return cosh(x); }
double f_asin(double x) { return asin(x); }
double f_acos(double x) { return acos(x); }
double f_atan(double x) { return atan(x); }
double f_copysign(double x) { return copysign(x * x, -1.0); }
double f_ldexp(double x) { return ldexp(x, 3); }
double f_fmod(double x) { return fmod(x, 0.75); }

int main(void) {
  double x = 0.6;
  check("log10", __enzyme_autodiff((void *)f_log10, x), 1 / (x * log(10.0)));
  check("log2", __enzyme_autodiff((void *)f_log2, x), 1 / (x * log(2.0)));
  check("exp2", __enzyme_autodiff((void *)f_exp2, x), exp2(x) * log(2.0));
  check("sinh", __enzyme_autodiff((void *)f_sinh, x), cosh(x));
  check("cosh", __enzyme_autodiff((void *)f_cosh, x), sinh(x));
  check("asin", __enzyme_autodiff((void *)f_asin, x), 1 / sqrt(1 - x * x));
  check("acos", __enzyme_autodiff((void *)f_acos, x), -1 / sqrt(1 - x * x));
  check("atan", __enzyme_autodiff((void *)f_atan, x), 1 / (1 + x * x));
  check("copysign", __enzyme_autodiff((void *)f_copysign, x), -2 * x);
  check("ldexp", __enzyme_autodiff((void *)f_ldexp, x), 8.0);
  check("fmod", __enzyme_autodiff((void *)f_fmod, 2.0), 1.0);
  return report();
}
