/* Single active scalar: negation, division by the variable, subtraction from a constant. */
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

double neg_sq(double x) { return -(x * x); }
double recip(double x) { return 1.0 / x; }
double rsub(double x) { return 2.0 - x * 3.0; }
double quotient(double x) { return (x + 1) / (x - 1); }

int main(void) {
  double x = 2.5;
  check("neg_sq", __enzyme_autodiff((void *)neg_sq, x), -2 * x);
  check("recip", __enzyme_autodiff((void *)recip, x), -1 / (x * x));
  check("rsub", __enzyme_autodiff((void *)rsub, x), -3.0);
  check("quotient", __enzyme_autodiff((void *)quotient, x), -2 / ((x - 1) * (x - 1)));
  /* forward/reverse dot test: the tangent along a direction v equals v * derivative */
  const double v = sin(1.3 + 7.1 * 1);
  check("dot_neg_sq", __enzyme_fwddiff((void *)neg_sq, x, v), v * __enzyme_autodiff((void *)neg_sq, x));
  check("dot_recip", __enzyme_fwddiff((void *)recip, x, v), v * __enzyme_autodiff((void *)recip, x));
  check("dot_rsub", __enzyme_fwddiff((void *)rsub, x, v), v * __enzyme_autodiff((void *)rsub, x));
  check("dot_quotient", __enzyme_fwddiff((void *)quotient, x, v), v * __enzyme_autodiff((void *)quotient, x));
  return report();
}
