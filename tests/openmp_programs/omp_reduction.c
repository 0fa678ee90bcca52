/* reduction(+:s) on doubles (two reduced variables, one loop with nowait-style end). */
#include "omp_check.h"
#define N 33
#define M 2
#define KERNEL(name, P)                                                          \
  void name(const double *x, double *y, int n) {                                 \
    double s = 0, q = 1.5;                                                       \
    P("omp parallel for reduction(+ : s, q)")                                    \
    for (int i = 0; i < n; i++) {                                                \
      s += x[i] * x[i] * x[(i + 3) % n];                                         \
      q += exp(0.1 * x[i]);                                                      \
    }                                                                            \
    y[0] = s * q;                                                                \
    y[1] = s;                                                                    \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
