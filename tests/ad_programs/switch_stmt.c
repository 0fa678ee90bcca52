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
  return report();
}
