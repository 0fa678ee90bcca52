/* Callees returning pointers: into the argument array, and to freshly malloc'd memory that the
   caller reads and frees. */
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

__attribute__((noinline)) static double *pick(double *x, int i) { return x + i; }

__attribute__((noinline)) static double *largest(double *x, int n) {
  double *m = x;
  for (int i = 1; i < n; i++)
    if (x[i] > *m) m = x + i;
  return m;
}

__attribute__((noinline)) static double *make_squares(const double *x, int n) {
  double *t = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) t[i] = x[i] * x[i];
  return t;
}

double use_pick(double *x, int n) { return *pick(x, 2) * *pick(x, 3) + *largest(x, n); }

double use_alloc(const double *x, int n) {
  double *t = make_squares(x, n);
  double s = 0;
  for (int i = 0; i < n; i++) s += t[i] * x[i];
  free(t);
  return s;
}

int main(void) {
  enum { N = 5 };
  double x[N] = {0.5, -1, 2, 3.5, 1.5}, dx[N] = {0};
  __enzyme_autodiff((void *)use_pick, enzyme_dup, x, dx, enzyme_const, N);
  double want[N] = {0, 0, x[3], x[2] + 1, 0};
  for (int i = 0; i < N; i++) checki("use_pick", i, dx[i], want[i]);
  /* forward/reverse dot test: the tangent along a direction v equals v . gradient */
  double v[N], vdx = 0;
  for (int i = 0; i < N; i++) { v[i] = rnd(i); vdx += v[i] * dx[i]; }
  check("dot_use_pick", __enzyme_fwddiff((void *)use_pick, enzyme_dup, x, v, enzyme_const, N), vdx);
  for (int i = 0; i < N; i++) dx[i] = 0;
  __enzyme_autodiff((void *)use_alloc, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("use_alloc", i, dx[i], 3 * x[i] * x[i]);
  vdx = 0;
  for (int i = 0; i < N; i++) vdx += v[i] * dx[i];
  check("dot_use_alloc", __enzyme_fwddiff((void *)use_alloc, enzyme_dup, x, v, enzyme_const, N), vdx);
  return report();
}
