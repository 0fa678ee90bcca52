/* calloc'd accumulator: acc_j = sum_{i<=j} x_i (prefix sums), result sum_j acc_j^2.
   d/dx_k = 2 sum_{j>=k} acc_j. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

double prefix_energy(const double *x, int n) {
  double *acc = calloc(n, sizeof(double));
  for (int i = 0; i < n; i++)
    for (int j = i; j < n; j++) acc[j] += x[i];
  double s = 0;
  for (int j = 0; j < n; j++) s += acc[j] * acc[j];
  free(acc);
  return s;
}

int main(void) {
  enum { N = 6 };
  double x[N] = {0.5, -1, 2, 0.3, 1.2, -0.7}, dx[N] = {0}, acc[N];
  double run = 0;
  for (int j = 0; j < N; j++) { run += x[j]; acc[j] = run; }
  __enzyme_autodiff((void *)prefix_energy, enzyme_dup, x, dx, enzyme_const, N);
  for (int k = 0; k < N; k++) {
    double want = 0;
    for (int j = k; j < N; j++) want += 2 * acc[j];
    checki("prefix", k, dx[k], want);
  }
  /* forward/reverse dot test: the tangent along a direction v equals v . gradient */
  double v[N], vdx = 0;
  for (int k = 0; k < N; k++) { v[k] = rnd(k); vdx += v[k] * dx[k]; }
  check("dot_prefix_energy", __enzyme_fwddiff((void *)prefix_energy, enzyme_dup, x, v, enzyme_const, N), vdx);
  return report();
}
