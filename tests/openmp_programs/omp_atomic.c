/* atomic updates of shared doubles (atomicrmw fadd: a histogram-like scatter, a subtraction),
   atomic capture, read and write, and a masked block. */
#include "omp_check.h"
#define N 40
#define M 7
#define KERNEL(name, P)                                                          \
  void name(const double *x, double *y, int n) {                                 \
    for (int j = 0; j < M; j++) y[j] = 0;                                        \
    P("omp parallel")                                                            \
    {                                                                            \
      P("omp for")                                                               \
      for (int i = 0; i < n; i++) {                                              \
        double v = x[i] * x[(i + 7) % n], old, r;                                \
        P("omp atomic")                                                          \
        y[i % 5] += v;                                                           \
        P("omp atomic")                                                          \
        y[(i + 2) % 5] -= 0.25 * x[i];                                           \
        P("omp atomic capture")                                                  \
        { old = y[5]; y[5] += x[i] * x[i]; }                                     \
        (void)old;                                                               \
        P("omp atomic read")                                                     \
        r = x[i];                                                                \
        P("omp atomic")                                                          \
        y[5] += r * 3;                                                           \
      }                                                                          \
      P("omp masked filter(0)")                                                  \
      {                                                                          \
        double v;                                                                \
        P("omp atomic read")                                                     \
        v = x[1];                                                                \
        P("omp atomic write")                                                    \
        y[6] = v * v;                                                            \
      }                                                                          \
    }                                                                            \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
