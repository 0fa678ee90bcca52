/* Ternaries (selects): on a scalar, and a leaky relu inside a loop over an array. */
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
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);

double tern(double x) { return x > 0 ? sin(x) : x * x * x; }

double leaky_sum(const double *v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += v[i] > 0 ? v[i] * v[i] : 0.1 * v[i];
  return s;
}

int main(void) {
  check("tern_pos", __enzyme_autodiff((void *)tern, 0.5), cos(0.5));
  check("tern_neg", __enzyme_autodiff((void *)tern, -0.5), 3 * 0.25);
  double v[6] = {1, -2, 0.5, -0.1, 3, -4}, dv[6] = {0};
  __enzyme_autodiff((void *)leaky_sum, enzyme_dup, v, dv, enzyme_const, 6);
  for (int i = 0; i < 6; i++) checki("leaky", i, dv[i], v[i] > 0 ? 2 * v[i] : 0.1);
  return report();
}
