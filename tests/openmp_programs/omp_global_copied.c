/* A parallel loop writing a file-scope array that the function copies into another after the
   region (a time loop's copy-back, which LLVM makes a memcpy): the copy's source was not
   counted as a read of the global, so the global written in the region and read by the caller
   got no shadow shared between them, and both modes gave a zero derivative. */
#include "omp_check.h"
#define N 19
#define M 19
#define KERNEL(name, P)                                                            \
  static double name##_W[N], name##_U[N];                                          \
  void name(const double *x, double *y, int n) {                                   \
    P("omp parallel for")                                                          \
    for (int i = 0; i < n; i++) name##_W[i] = sin(x[i]) * x[(i + 1) % n];         \
    for (int i = 0; i < N; i++) name##_U[i] = name##_W[i];                         \
    for (int i = 0; i < n; i++) y[i] = name##_U[i] * name##_U[(i + 3) % n] + x[i]; \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
