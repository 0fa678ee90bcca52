/* A file-scope array filled from the input before a parallel loop whose reduction reads it
   (NPB CG's `!$omp do reduction(+:rho)` over module arrays): the region reads the active
   global but is handed no active argument, so the fork's stores into the reduction variable
   were skipped ("nothing active goes in") and the derivative was refused: "an active value is
   stored to memory that has no shadow". */
#include "omp_check.h"
#define N 13
#define M 2
#define KERNEL(name, P)                                                            \
  static double name##_Z[N];                                                       \
  void name(const double *x, double *y, int n) {                                   \
    for (int i = 0; i < n; i++) name##_Z[i] = x[i] * x[(i + 2) % n];               \
    double s = 0.0;                                                                \
    P("omp parallel for reduction(+ : s)")                                         \
    for (int i = 0; i < n; i++) s += name##_Z[i] * sin(name##_Z[i]);               \
    y[0] = s;                                                                      \
    y[1] = s * name##_Z[0];                                                        \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
