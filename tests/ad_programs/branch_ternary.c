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
double __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random direction entries */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

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
  /* forward/reverse dot test: the tangent along a direction equals direction . gradient */
  double t = rnd(0), tv[6], tdv = 0;
  check("dot_tern_pos", __enzyme_fwddiff((void *)tern, 0.5, t), t * __enzyme_autodiff((void *)tern, 0.5));
  check("dot_tern_neg", __enzyme_fwddiff((void *)tern, -0.5, t), t * __enzyme_autodiff((void *)tern, -0.5));
  for (int i = 0; i < 6; i++) { tv[i] = rnd(i + 1); tdv += tv[i] * dv[i]; }
  check("dot_leaky", __enzyme_fwddiff((void *)leaky_sum, enzyme_dup, v, tv, enzyme_const, 6), tdv);
  return report();
}
