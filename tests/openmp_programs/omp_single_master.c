/* single and master inside a parallel region, with barriers between the phases: one thread
   prepares a shared value, all threads use it (reverse: the taking thread reverses it). */
#include "omp_check.h"
#define N 26
#define M 26
#define KERNEL(name, P)                                                          \
  void name(const double *x, double *y, int n) {                                 \
    double scale = 0, shift = 0;                                                 \
    P("omp parallel")                                                            \
    {                                                                            \
      P("omp single")                                                            \
      scale = x[0] * x[1] + 1;                                                   \
      P("omp master")                                                            \
      shift = cos(x[2]);                                                         \
      P("omp barrier")                                                           \
      P("omp for")                                                               \
      for (int i = 0; i < n; i++) y[i] = scale * x[i] + shift * x[i] * x[i];     \
    }                                                                            \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
