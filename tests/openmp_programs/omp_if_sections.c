/* parallel if(...) (false: the region runs serialized on the calling thread; true: a team) and
   parallel sections (a static worksharing loop over the section numbers). */
#include "omp_check.h"
#define N 23
#define M 23
#define KERNEL(name, P)                                                          \
  void name(const double *x, double *y, int n) {                                 \
    P("omp parallel for if(n > 1000)")                                           \
    for (int i = 0; i < n; i++) y[i] = x[i] * x[(i + 2) % n];                    \
    P("omp parallel for if(n > 2)")                                              \
    for (int i = 0; i < n; i++) y[i] += sin(x[i]);                               \
    P("omp parallel sections")                                                   \
    {                                                                            \
      P("omp section")                                                           \
      y[0] *= x[n - 1];                                                          \
      P("omp section")                                                           \
      y[1] += x[0] * x[n - 1];                                                   \
      P("omp section")                                                           \
      y[2] = exp(0.1 * y[2]);                                                    \
    }                                                                            \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
