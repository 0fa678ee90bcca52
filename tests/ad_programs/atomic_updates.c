/* Atomic read-modify-write of doubles (__atomic_fetch_add / __atomic_fetch_sub: atomicrmw
   fadd/fsub), the old value used too. f = S - x0 + S^2 with S = sum x_i^2. Reverse mode against
   the analytic gradient, forward against reverse. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
int enzyme_dup, enzyme_const;

__attribute__((noinline)) void accumulate(const double *x, double *s, int n) {
  for (int i = 0; i < n; i++) __atomic_fetch_add(s, x[i] * x[i], __ATOMIC_RELAXED);
}
double f(const double *x, int n) {
  double s = 0;
  accumulate(x, &s, n);
  double old = __atomic_fetch_sub(&s, x[0], __ATOMIC_SEQ_CST);
  return s + old * old;
}

int main(void) {
  double x[3] = {1, 2, 3}, dx[3] = {0}, v[3] = {1, 0.5, -1};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, 3);
  const double S = 14;
  check("dx[0]", dx[0], 2 * x[0] * (1 + 2 * S) - 1);
  check("dx[1]", dx[1], 2 * x[1] * (1 + 2 * S));
  check("dx[2]", dx[2], 2 * x[2] * (1 + 2 * S));
  check("dot_f", __enzyme_fwddiff((void *)f, enzyme_dup, x, v, enzyme_const, 3),
        v[0] * dx[0] + v[1] * dx[1] + v[2] * dx[2]);
  return failed != 0;
}
