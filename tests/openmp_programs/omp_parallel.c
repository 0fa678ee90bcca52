/* #pragma omp parallel with a hand-made partition by thread number; every thread reads its
   neighbours' inputs (shared adjoints added by several threads). */
#include <omp.h>
#include "omp_check.h"
#define N 37
#define M 37
#define KERNEL(name, P)                                                          \
  void name(const double *x, double *y, int n) {                                 \
    P("omp parallel")                                                            \
    {                                                                            \
      int t = 0, nt = 1;                                                         \
      t = omp_get_thread_num(); nt = omp_get_num_threads();                      \
      for (int i = t; i < n; i += nt)                                            \
        y[i] = sin(x[i]) * x[(i + 1) % n] + x[(i + n - 1) % n] * x[0];           \
    }                                                                            \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
