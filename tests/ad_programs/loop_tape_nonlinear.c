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
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
int enzyme_const;
double __enzyme_autodiff(void *, ...);

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
  return report();
}
