/* A temporary buffer from malloc inside the differentiated function, freed before returning:
   its shadow must be allocated too and the free deferred to the reverse pass. */
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
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }
static double dotp(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

/* t_i = x_i^2; result sum t_i * x_i = sum x_i^3 */
double cube_sum(const double *x, int n) {
  double *t = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) t[i] = x[i] * x[i];
  double s = 0;
  for (int i = 0; i < n; i++) s += t[i] * x[i];
  free(t);
  return s;
}

/* temporary overwritten in place: t <- exp(t) twice */
double twice_exp(const double *x, int n) {
  double *t = (double *)malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) t[i] = 0.5 * x[i];
  for (int i = 0; i < n; i++) t[i] = exp(t[i]);
  double s = 0;
  for (int i = 0; i < n; i++) s += t[i];
  free(t);
  return s;
}

int main(void) {
  enum { N = 5 };
  double x[N] = {1, -0.5, 2, 0.25, -1.5}, dx[N] = {0};
  double v[N];   /* forward J.v versus v . (reverse gradient) */
  for (int i = 0; i < N; i++) v[i] = rnd(i);
  __enzyme_autodiff((void *)cube_sum, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("cube_sum", i, dx[i], 3 * x[i] * x[i]);
  check("dot_cube_sum", __enzyme_fwddiff((void *)cube_sum, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dx, N));
  for (int i = 0; i < N; i++) dx[i] = 0;
  __enzyme_autodiff((void *)twice_exp, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("twice_exp", i, dx[i], 0.5 * exp(0.5 * x[i]));
  check("dot_twice_exp", __enzyme_fwddiff((void *)twice_exp, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dx, N));
  return report();
}
