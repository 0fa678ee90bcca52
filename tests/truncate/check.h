/* CHECK lines for the truncation tests: exact (bit-for-bit) or near comparisons. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check_exact(const char *name, double got, double want) {
  int ok = got == want || (isnan(got) && isnan(want));
  printf("CHECK %s %.17g %.17g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
static void check_near(const char *name, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1.0 + fabs(want));
  printf("CHECK %s %.17g %.17g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
volatile double seed = 0.7; /* inputs the compiler cannot constant-fold */
static double rnd(int k) { return sin(seed + 7.1 * k) * 3; }
