/* explicit barriers between two phases that exchange data through a shared array: phase 2
   reads what other threads wrote in phase 1. num_threads(3): the team size does not come from
   OMP_NUM_THREADS (the reverse sweep's team is pushed to the forward sweep's size). */
#include <omp.h>
#include "omp_check.h"
#define N 24
#define M 24
#define KERNEL(name, P)                                                          \
  void name(const double *x, double *y, int n) {                                 \
    double tmp[N];                                                               \
    P("omp parallel num_threads(3)")                                             \
    {                                                                            \
      int t = omp_get_thread_num(), nt = omp_get_num_threads();                  \
      for (int i = t; i < n; i += nt) tmp[i] = x[i] * x[i];                      \
      P("omp barrier")                                                           \
      for (int i = t; i < n; i += nt) y[i] = tmp[(i + 1) % n] * x[i];            \
      P("omp barrier")                                                           \
      for (int i = t; i < n; i += nt) tmp[i] = 0;                                \
    }                                                                            \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
