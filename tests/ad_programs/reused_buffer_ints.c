// A scratch buffer held by a global pointer, filled with doubles in one phase and reused for
// ints in another (miniAMR's send_buff carries block numbers between halo exchanges): `-1 - i`
// on an int read back from it is integer arithmetic, not a float's bits being manipulated.
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
extern double __enzyme_autodiff(void *, ...);
extern double __enzyme_fwddiff(void *, ...);
extern int enzyme_dup, enzyme_const;
double *buf;
int n = 4, tags[4];
__attribute__((noinline)) void exchange_ints(void) {
  int *ib = (int *)buf;
  for (int i = 0; i < n; i++) ib[i] = 3 * i + 1;
  for (int i = 0; i < n; i++) tags[i] = -1 - ib[i];
}
__attribute__((noinline)) double exchange_doubles(double *x) {
  for (int i = 0; i < n; i++) buf[i] = x[i] * x[i];
  double s = 0;
  for (int i = 0; i < n; i++) s += buf[i] * tags[i];
  return s;
}
double f(double *x) { exchange_ints(); return exchange_doubles(x); }
int main(void) {
  buf = malloc(n * sizeof(double));
  double x[4] = {1, 2, 3, 4}, dx[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx);
  for (int i = 0; i < 4; i++) {
    double t[4] = {0};
    t[i] = 1;
    double fwd = __enzyme_fwddiff((void *)f, enzyme_dup, x, t);
    printf("CHECK rev_%d %g %g\n", i, dx[i], 2 * x[i] * (-2 - 3 * i));
    printf("CHECK fwd_%d %g %g\n", i, fwd, 2 * x[i] * (-2 - 3 * i));
  }
  return 0;
}
