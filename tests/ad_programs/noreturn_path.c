/* An error path that never returns (it reports and aborts): nothing there needs a derivative,
   so a call on it without bitcode or a rule (qsort of active values), and stores of active
   values into memory without a shadow, do not stop the build; the path runs as primal code.
   Reverse and forward mode, checked against the analytic derivative. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-9 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
void qsort(void *, size_t, size_t, int (*)(const void *, const void *));

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double total;                     /* written only on the error path */

__attribute__((noinline)) double f(double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    if (!(x[i] > -100)) {                /* never taken here */
      double bad[2] = {x[i], x[i] * 2};
      qsort(bad, 2, sizeof bad[0], cmp);
      total = bad[0] + bad[1];
      fprintf(stderr, "bad input %g\n", total);
      abort();
    }
    s += sin(x[i]) * x[i];
  }
  return s;
}

int main(void) {
  for (int rep = 0; rep < 2; rep++) {
    double x[3] = {0.5, 1.5, -2.0}, dx[3] = {0}, v[3] = {0.3, -0.7, 1.1};
    __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, 3);
    double jv = 0;
    for (int i = 0; i < 3; i++) {
      char name[32];
      snprintf(name, sizeof name, "rev_dx[%d]", i);
      check(name, dx[i], cos(x[i]) * x[i] + sin(x[i]));
      jv += dx[i] * v[i];
    }
    check("dot_fwd_rev", __enzyme_fwddiff((void *)f, enzyme_dup, x, v, enzyme_const, 3), jv);
  }
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
