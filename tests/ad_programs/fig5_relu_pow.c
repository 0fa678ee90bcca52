/* Paper Figure 5: relu(pow(x, 3)); a phi joins the pow result and 0. */
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

double relu3(double x) {
  double r = 0;
  if (x > 0) r = pow(x, 3);
  return r;
}

int main(void) {
  check("relu3_at_2", __enzyme_autodiff((void *)relu3, 2.0), 12.0);
  check("relu3_at_0.5", __enzyme_autodiff((void *)relu3, 0.5), 0.75);
  check("relu3_at_-2", __enzyme_autodiff((void *)relu3, -2.0), 0.0);
  /* forward/reverse dot test: the tangent along a direction v equals v * derivative */
  const double v = sin(1.3);
  check("dot_relu3_at_2", __enzyme_fwddiff((void *)relu3, 2.0, v), v * __enzyme_autodiff((void *)relu3, 2.0));
  check("dot_relu3_at_0.5", __enzyme_fwddiff((void *)relu3, 0.5, v), v * __enzyme_autodiff((void *)relu3, 0.5));
  check("dot_relu3_at_-2", __enzyme_fwddiff((void *)relu3, -2.0, v), v * __enzyme_autodiff((void *)relu3, -2.0));
  return report();
}
