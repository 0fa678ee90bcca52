/* private, firstprivate (an integer and an array) and lastprivate (a double used after the
   loop). */
#include "omp_check.h"
#define N 29
#define M 29
#define KERNEL(name, P)                                                          \
  void name(const double *x, double *y, int n) {                                 \
    double t, last = 0;                                                          \
    double c[2] = {x[0], 2 * x[1]};                                              \
    int k = 3;                                                                   \
    P("omp parallel for private(t) firstprivate(k, c) lastprivate(last)")        \
    for (int i = 0; i < n; i++) {                                                \
      t = x[i] * c[i % 2] + k;                                                   \
      y[i] = t * t;                                                              \
      last = t * x[(i + 1) % n];                                                 \
    }                                                                            \
    y[0] += last;                                                                \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
