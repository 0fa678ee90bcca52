/* Calls that carry no derivative inside the differentiated function: assert, a guarded
   fprintf, abs() on an int, strlen on a name; the gradient must ignore them. */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int verbose = 0;

double logged(const double *x, int n, const char *name) {
  assert(n > 0);
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i] * abs(i - 2);
  if (verbose) fprintf(stderr, "%s: s = %g\n", name, s);
  return s * (double)strlen(name);
}

int main(void) {
  enum { N = 5 };
  double x[N] = {0.5, -1, 2, 0.25, 1.5}, dx[N] = {0};
  const char *name = "abc";
  __enzyme_autodiff((void *)logged, enzyme_dup, x, dx, enzyme_const, N, enzyme_const, name);
  for (int i = 0; i < N; i++) checki("dx", i, dx[i], 2 * x[i] * abs(i - 2) * 3.0);
  /* forward/reverse dot test: the tangent along a direction v equals v . gradient */
  double v[N], vdx = 0;
  for (int i = 0; i < N; i++) { v[i] = rnd(i); vdx += v[i] * dx[i]; }
  check("dot_logged", __enzyme_fwddiff((void *)logged, enzyme_dup, x, v, enzyme_const, N, enzyme_const, name), vdx);
  return report();
}
