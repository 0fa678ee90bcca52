/* A variable-length array temporary on the stack (dynamic alloca). */
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

double vla(const double *x, int n) {
  double t[n];
  for (int i = 0; i < n; i++) t[i] = cos(x[i]);
  double s = 0;
  for (int i = 0; i < n; i++) s += t[i] * t[(i + 1) % n];
  return s;
}

int main(void) {
  enum { N = 5 };
  double x[N] = {0.5, -1, 2, 0.25, 1.5}, dx[N] = {0};
  __enzyme_autodiff((void *)vla, enzyme_dup, x, dx, enzyme_const, N);
  for (int k = 0; k < N; k++)
    checki("dx", k, dx[k], -sin(x[k]) * (cos(x[(k + 1) % N]) + cos(x[(k + N - 1) % N])));
  return report();
}
