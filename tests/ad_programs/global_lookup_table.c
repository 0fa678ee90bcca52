/* Constant global tables: polynomial coefficients (double) and an index permutation (int). */
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

static const double coef[6] = {1.0, -0.5, 0.25, 2.0, -1.0, 0.125};
static const int perm[5] = {3, 0, 4, 1, 2};
const double scale_table[5] = {1.5, 2.5, -1.0, 0.5, 3.0};   /* external linkage, constant */

double poly(double x) {
  double s = 0, p = 1;
  for (int k = 0; k < 6; k++) {
    s += coef[k] * p;
    p *= x;
  }
  return s;
}

double permuted(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += scale_table[i] * x[perm[i]] * x[i];
  return s;
}

int main(void) {
  double x = 0.7, want = 0;
  for (int k = 1; k < 6; k++) want += k * coef[k] * pow(x, k - 1);
  check("poly", __enzyme_autodiff((void *)poly, x), want);
  double v[5] = {0.5, -1, 2, 1.5, -0.25}, dv[5] = {0};
  __enzyme_autodiff((void *)permuted, enzyme_dup, v, dv, enzyme_const, 5);
  for (int k = 0; k < 5; k++) {
    double w = 0;
    for (int i = 0; i < 5; i++) {
      if (perm[i] == k) w += scale_table[i] * v[i];
      if (i == k) w += scale_table[i] * v[perm[i]];
    }
    checki("permuted", k, dv[k], w);
  }
  /* forward/reverse dot test: the tangent along a direction t equals t . gradient */
  double t[5], tdv = 0;
  for (int k = 0; k < 5; k++) { t[k] = rnd(k); tdv += t[k] * dv[k]; }
  check("dot_poly", __enzyme_fwddiff((void *)poly, x, t[0]), t[0] * want);
  check("dot_permuted", __enzyme_fwddiff((void *)permuted, enzyme_dup, v, t, enzyme_const, 5), tdv);
  return report();
}
