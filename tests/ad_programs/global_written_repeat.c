/* Derivatives called again and again on a function that reads a global before writing it (the
   state of a recurrence): each derivative starts from a zero shadow of the global, whatever the
   one before left there (reverse mode: the adjoint of the value on entry; forward mode: the
   tangent of the value written). */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

double state = 1.5;
double coef[2] = {0.5, 2.0};

/* reads the state, then replaces it: the result depends on x through both */
double step(double x) {
  double r = state * sin(x) + coef[0] * x;
  state = x * x + coef[1];
  return r + state * x;
}

int main(void) {
  const double x = 0.6;
  for (int rep = 0; rep < 3; rep++) {
    state = 1.5;
    double want = 1.5 * cos(x) + coef[0] + 3 * x * x + coef[1];
    double g = __enzyme_autodiff((void *)step, x);
    check("rev_repeat", g, want);
    state = 1.5;
    double t = __enzyme_fwddiff((void *)step, x, 1.0);
    check("fwd_repeat", t, want);
    check("dot_fwd_rev", t * 0.7, 0.7 * g);  /* <J v, w> with v = 0.7, w = 1 */
  }
  return report();
}
