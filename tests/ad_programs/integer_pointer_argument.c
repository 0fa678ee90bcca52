/* A pointer to integers passed without a marker and without a shadow, as Enzyme's integration
   tests do (`__enzyme_fwddiff((void *)msg, &array, &darray, &len, slen)` with `int len[10]`):
   Enzyme's type analysis sees integer memory and gives it no shadow. It was taken as enzyme_dup,
   the next argument (an integer) as its shadow: "too few arguments". Reverse mode against the
   analytic gradient, forward mode against reverse. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-9 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
#define N 4

/* s = sum_i x[i]^2 * len[i] */
__attribute__((noinline)) double weighted(const double *x, const int *len, unsigned n) {
  double s = 0;
  for (unsigned i = 0; i < n; i++) s += x[i] * x[i] * len[i];
  return s;
}
/* the integers are the last argument: nothing follows them */
__attribute__((noinline)) double scaled(const double *x, unsigned n, const int *len) {
  return weighted(x, len, n) * 0.5;
}

int main(void) {
  double x[N] = {0.5, -1.25, 2.0, 0.75}, dx[N] = {0}, dx2[N] = {0};
  int len[N] = {3, 1, 4, 2};
  unsigned n = N;
  __enzyme_autodiff((void *)weighted, x, dx, len, n);
  __enzyme_autodiff((void *)scaled, x, dx2, n, len);
  double t[N], dot = 0;
  for (int i = 0; i < N; i++) {
    char name[32];
    snprintf(name, sizeof name, "dx[%d]", i);
    check(name, dx[i], 2 * x[i] * len[i]);
    snprintf(name, sizeof name, "dx2[%d]", i);
    check(name, dx2[i], x[i] * len[i]);
    t[i] = cos(1.0 + i);
    dot += t[i] * dx[i];
  }
  check("fwd", __enzyme_fwddiff((void *)weighted, x, t, len, n), dot);
  return failed != 0;
}
