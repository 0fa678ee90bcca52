/* atomic updates of shared doubles (atomicrmw fadd): a histogram-like scatter. */
#include "omp_check.h"
#define N 40
#define M 5
#define KERNEL(name, P)                                                          \
  void name(const double *x, double *y, int n) {                                 \
    for (int j = 0; j < M; j++) y[j] = 0;                                        \
    P("omp parallel for")                                                        \
    for (int i = 0; i < n; i++) {                                                \
      double v = x[i] * x[(i + 7) % n];                                          \
      P("omp atomic")                                                            \
      y[i % M] += v;                                                             \
      P("omp atomic")                                                            \
      y[(i + 2) % M] -= 0.25 * x[i];                                             \
    }                                                                            \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
