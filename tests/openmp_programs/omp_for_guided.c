/* parallel for, guided schedule (chunks 1 and 3): a 3-point stencil, so neighbouring
   threads add into the same input adjoints. */
#include "omp_check.h"
#define N 41
#define M 41
#define KERNEL(name, P)                                                          \
  void name(const double *x, double *y, int n) {                                 \
    P("omp parallel for schedule(guided)")                                       \
    for (int i = 1; i < n - 1; i++)                                              \
      y[i] = x[i - 1] * x[i] + x[i + 1] * x[i + 1] - 0.5 * x[i];                 \
    y[0] = x[0] * x[0];                                                          \
    y[n - 1] = 0;                                                                \
    P("omp parallel for schedule(guided, 3)")                                    \
    for (int i = 1; i < n; i++)                                                  \
      y[i] += cos(x[i - 1]) * x[i];                                              \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
