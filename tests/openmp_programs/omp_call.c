/* a parallel loop calling a function that is not inlined (it reads a shared coefficient and
   neighbouring inputs; its derivative is a parallel one too). */
#include "omp_check.h"
#define N 35
#define M 35
__attribute__((noinline)) static double cell(const double *x, const double *c, int i, int n) {
  double a = x[i], b = x[(i + 1) % n];
  return c[0] * a * b + sqrt(1 + a * a) * c[1];
}
#define KERNEL(name, P)                                                          \
  void name(const double *x, double *y, int n) {                                 \
    double c[2] = {x[0], 0.5 * x[1]};                                            \
    P("omp parallel for schedule(dynamic, 4)")                                   \
    for (int i = 0; i < n; i++) y[i] = cell(x, c, i, n);                         \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
