/* A parallel loop choosing, per element, between an input and a scalar without a derivative
   (`c ? x[j] : damp`, damp shared by the region): LLVM loads from a select of the two
   addresses, joining active memory with the captured address of a scalar that has no shadow.
   That scalar's side reads zero tangents and drops its adjoints (a constant zero or a sink as
   its shadow); once this was refused as "joins shadowed and unshadowed memory". */
#include "omp_check.h"
#define N 23
#define M 23
#define KERNEL(name, P)                                                            \
  void name(const double *x, double *y, int n) {                                   \
    double damp = 0.35 + 0.01 * n;                                                 \
    P("omp parallel for")                                                          \
    for (int i = 0; i < n; i++) {                                                  \
      int j = (i + 5) % n;                                                         \
      y[i] = sin(x[i] - (x[i] > 0.5 ? x[j] : damp)) + 0.5 * x[i] * x[i];         \
    }                                                                              \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
