/* firstprivate scalars: doubles (passed by value as the bits of the double, which enzyme-cc
   routes through memory so that they carry their shadow) and an integer. */
#include "omp_check.h"
#define N 21
#define M 21
#define KERNEL(name, P)                                                          \
  void name(const double *x, double *y, int n) {                                 \
    double c = x[0] * 2, d = sin(x[1]);                                          \
    int k = 2;                                                                   \
    P("omp parallel for firstprivate(c, d, k)")                                  \
    for (int i = 0; i < n; i++) { y[i] = x[i] * c + d * d * k; }                 \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
