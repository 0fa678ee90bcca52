/* critical: every thread accumulates its partial product into shared sums under a lock (the
   reverse of the critical body runs under the lock too). */
#include "omp_check.h"
#define N 31
#define M 2
#define KERNEL(name, P)                                                          \
  void name(const double *x, double *y, int n) {                                 \
    y[0] = 0;                                                                    \
    y[1] = 1;                                                                    \
    P("omp parallel")                                                            \
    {                                                                            \
      double part = 0;                                                           \
      P("omp for")                                                               \
      for (int i = 0; i < n; i++) part += x[i] * sin(x[i]);                      \
      P("omp critical")                                                          \
      {                                                                          \
        y[0] += part;                                                            \
        y[1] = y[1] * exp(0.1 * part);                                           \
      }                                                                          \
    }                                                                            \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
