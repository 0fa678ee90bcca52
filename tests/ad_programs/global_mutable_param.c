/* A mutable (non-const) global double used as a model parameter and only read by the
   differentiated function: its value is a constant for the gradient with respect to x. */
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

double gravity = 9.81;
double drag[3] = {0.1, 0.2, 0.3};

double height(double v0) {
  double t = 1.5;
  return v0 * t - 0.5 * gravity * t * t - drag[1] * v0 * v0;
}

int main(void) {
  double v = 3.0;
  check("dv0", __enzyme_autodiff((void *)height, v), 1.5 - 2 * drag[1] * v);
  gravity = 1.62;
  check("dv0_moon", __enzyme_autodiff((void *)height, v), 1.5 - 2 * drag[1] * v);
  /* forward/reverse dot test: the tangent along a direction t equals t * derivative */
  const double t = sin(1.3);
  check("dot_height", __enzyme_fwddiff((void *)height, v, t), t * __enzyme_autodiff((void *)height, v));
  return report();
}
