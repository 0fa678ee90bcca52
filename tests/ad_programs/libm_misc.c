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
double __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }
/* forward tangent along t versus t * reverse derivative */
#define DOT(name, f, x, t) \
  check("dot_" name, __enzyme_fwddiff((void *)f, x, t), (t) * __enzyme_autodiff((void *)f, x))

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
  DOT("log10", f_log10, x, rnd(0));
  DOT("log2", f_log2, x, rnd(1));
  DOT("exp2", f_exp2, x, rnd(2));
  DOT("sinh", f_sinh, x, rnd(3));
  DOT("cosh", f_cosh, x, rnd(4));
  DOT("asin", f_asin, x, rnd(5));
  DOT("acos", f_acos, x, rnd(6));
  DOT("atan", f_atan, x, rnd(7));
  DOT("copysign", f_copysign, x, rnd(8));
  DOT("ldexp", f_ldexp, x, rnd(9));
  DOT("fmod", f_fmod, 2.0, rnd(10));
  return report();
}
