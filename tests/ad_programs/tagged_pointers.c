// Pointers with tag bits in their low bits (FFTW marks an array's alignment class so:
// UNTAINT(p) = p & ~3, JOIN_TAINT(p1, p2) = p1 | (p2 & 3)): the shadow is the same bit
// operations on the shadow address (was an internal error, then "float data accessed through
// a pointer made from an integer").
#include <math.h>
#include <stdint.h>
#include <stdio.h>
extern double __enzyme_autodiff(void *, ...);
extern double __enzyme_fwddiff(void *, ...);
extern int enzyme_dup, enzyme_const;
#define UNTAINT(p) ((double *)(((uintptr_t)(p)) & ~(uintptr_t)3))
#define TAINTOF(p) (((uintptr_t)(p)) & 3)
#define TAINT(p, t) ((double *)(((uintptr_t)(p)) | (t)))
#define JOIN_TAINT(p1, p2) ((double *)(((uintptr_t)(p1)) | TAINTOF(p2)))
__attribute__((noinline)) static double weighted(const double *p, int n) {
  const double *q = UNTAINT(p);
  double s = 0;
  for (int i = 0; i < n; i++) s += sin(q[i]) * q[i] * (TAINTOF(p) + 1);
  return s;
}
double f(double *u, double *v, int n) {
  double *w = TAINT(u, n % 3);
  if (UNTAINT(u) == UNTAINT(v)) w = JOIN_TAINT(u, w);
  return weighted(w, n) + weighted(v, n);
}
int main(void) {
  enum { N = 4 };
  double x[N] = {0.3, -0.7, 1.1, 0.4}, y[N] = {0.9, 0.2, -0.5, 1.3}, dx[N] = {0}, dy[N] = {0};
  double h = 1e-6;
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_dup, y, dy, enzyme_const, N);
  for (int i = 0; i < N; i++) {
    double t[N] = {0}, z[N] = {0}, s = x[i];
    t[i] = 1;
    x[i] = s + h; double fp = f(x, y, N);
    x[i] = s - h; double fm = f(x, y, N);
    x[i] = s;
    double fwd = __enzyme_fwddiff((void *)f, enzyme_dup, x, t, enzyme_dup, y, z, enzyme_const, N);
    printf("CHECK rev_%d %.9g %.9g\n", i, dx[i], (fp - fm) / (2 * h));
    printf("CHECK fwd_%d %.9g %.9g\n", i, fwd, (fp - fm) / (2 * h));
  }
  return 0;
}
