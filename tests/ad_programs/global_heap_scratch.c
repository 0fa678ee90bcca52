// A scratch buffer held by a global pointer of the program's (not static: other files declare
// it extern), allocated before the derivative by the program's own allocation wrapper, which
// counts what it hands out: the derivative gives it a zeroed shadow block of the same size.
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
extern double __enzyme_autodiff(void *, ...);
extern double __enzyme_fwddiff(void *, ...);
extern int enzyme_dup, enzyme_const;
double *work;
long allocated;
__attribute__((noinline)) void *counted_malloc(size_t n) {
  void *p = malloc(n);
  if (!p) { fprintf(stderr, "out of memory\n"); exit(1); }
  allocated += n;
  return p;
}
__attribute__((noinline)) static void stage(const double *x, int n) {
  for (int i = 0; i < n; i++) work[i] = sin(x[i]) * x[(i + 1) % n];
}
double f(const double *x, int n) {
  stage(x, n);
  double s = 0;
  for (int i = 0; i < n; i++) s += work[i] * work[(i + 2) % n];
  return s;
}
int main(void) {
  enum { N = 5 };
  work = counted_malloc(N * sizeof(double));
  double x[N] = {0.3, -0.7, 1.1, 0.4, 2.0}, dx[N] = {0}, h = 1e-6;
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) {
    double t[N] = {0}, s = x[i];
    t[i] = 1;
    x[i] = s + h; double fp = f(x, N);
    x[i] = s - h; double fm = f(x, N);
    x[i] = s;
    double fwd = __enzyme_fwddiff((void *)f, enzyme_dup, x, t, enzyme_const, N);
    printf("CHECK rev_%d %.9g %.9g\n", i, dx[i], (fp - fm) / (2 * h));
    printf("CHECK fwd_%d %.9g %.9g\n", i, fwd, (fp - fm) / (2 * h));
  }
  // a second call starts from a zero shadow again
  double dx2[N] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx2, enzyme_const, N);
  for (int i = 0; i < N; i++) printf("CHECK again_%d %.9g %.9g\n", i, dx2[i], dx[i]);
  return 0;
}
