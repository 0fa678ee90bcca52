/* A switch on a constant int selecting the formula (lowered to branches before AD). */
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
#define DOT(name, x, kind, t) \
  check("dot_" name, __enzyme_fwddiff((void *)by_kind, x, t, kind), \
        (t) * __enzyme_autodiff((void *)by_kind, x, kind))

double by_kind(double x, int kind) {
  double r;
  switch (kind) {
  case 0: r = x * x; break;
  case 1: r = sin(x); break;
  case 2: r = exp(2 * x); break;
  case 7: r = x * x * x; break;
  default: r = -x; break;
  }
  return r;
}

int main(void) {
  double x = 0.4;
  check("case0", __enzyme_autodiff((void *)by_kind, x, 0), 2 * x);
  check("case1", __enzyme_autodiff((void *)by_kind, x, 1), cos(x));
  check("case2", __enzyme_autodiff((void *)by_kind, x, 2), 2 * exp(2 * x));
  check("case7", __enzyme_autodiff((void *)by_kind, x, 7), 3 * x * x);
  check("default", __enzyme_autodiff((void *)by_kind, x, 5), -1.0);
  DOT("case0", x, 0, rnd(0));
  DOT("case1", x, 1, rnd(1));
  DOT("case2", x, 2, rnd(2));
  DOT("case7", x, 7, rnd(3));
  DOT("default", x, 5, rnd(4));
  return report();
}
