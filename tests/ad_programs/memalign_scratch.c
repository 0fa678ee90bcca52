// Scratch memory from memalign and valloc inside the differentiated function (FFTW's
// fftw_malloc is memalign(32, n)): allocators like aligned_alloc, whose shadow block comes from
// the same call. They were taken for calls without bitcode ("active float data is copied into
// memory that has no shadow").
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern double __enzyme_autodiff(void *, ...);
extern double __enzyme_fwddiff(void *, ...);
extern int enzyme_dup, enzyme_const;
double f(const double *u, int n) {
  double *t = memalign(32, n * sizeof(double));
  double *w = valloc(n * sizeof(double));
  memcpy(t, u, n * sizeof(double));
  for (int i = 0; i < n; i++) w[i] = sin(t[i]) * t[(i + 1) % n];
  double s = 0;
  for (int i = 0; i < n; i++) s += w[i] * t[i];
  free(w);
  free(t);
  return s;
}
int main(void) {
  enum { N = 5 };
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
  return 0;
}
