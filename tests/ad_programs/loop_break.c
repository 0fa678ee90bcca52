/* Loops with an early exit: break on the first negative entry, and on an accumulated bound. */
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
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }
static double dotp(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

double until_negative(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    if (x[i] < 0) break;
    s += x[i] * x[i] * x[i];
  }
  return s;
}

double until_bound(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    s += exp(x[i]);
    if (s > 5) break;
  }
  return s;
}

/* search loop returning from inside the body */
double first_big(const double *x, int n) {
  for (int i = 0; i < n; i++)
    if (x[i] > 1) return x[i] * x[i];
  return 0;
}

int main(void) {
  enum { N = 6 };
  double x[N] = {0.5, 2, 1.5, -1, 3, 4}, dx[N] = {0}, v[N];
  for (int i = 0; i < N; i++) v[i] = rnd(i);   /* forward J.v versus v . (reverse gradient) */
  __enzyme_autodiff((void *)until_negative, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("until_neg", i, dx[i], i < 3 ? 3 * x[i] * x[i] : 0.0);
  check("dot_until_neg",
        __enzyme_fwddiff((void *)until_negative, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dx, N));
  for (int i = 0; i < N; i++) dx[i] = 0;
  __enzyme_autodiff((void *)until_bound, enzyme_dup, x, dx, enzyme_const, N);
  /* exp(0.5) + exp(2) > 5 after two terms */
  for (int i = 0; i < N; i++) checki("until_bound", i, dx[i], i < 2 ? exp(x[i]) : 0.0);
  check("dot_until_bound", __enzyme_fwddiff((void *)until_bound, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dx, N));
  for (int i = 0; i < N; i++) dx[i] = 0;
  __enzyme_autodiff((void *)first_big, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("first_big", i, dx[i], i == 1 ? 4.0 : 0.0);
  check("dot_first_big", __enzyme_fwddiff((void *)first_big, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dx, N));
  return report();
}
