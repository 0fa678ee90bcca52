/* shared scalars a region only reads, reloaded by its loops (stores into captured arrays in the
   same loop keep LLVM from hoisting the loads): the link step loads each once on entry
   (openmp_capture.hoist_reads), so reverse mode adds each one's adjoint into its shadow once per
   thread instead of once per iteration. The scalars are active (computed from x), change
   between forks of a time loop, and one is written by a later region (an atomic update), which
   must keep its loads. */
#include "omp_check.h"
#define N 29
#define M 29
#define KERNEL(name, P)                                                                 \
  void name(const double *x, double *y, int n) {                                        \
    double c = 0.5 * x[0], d = x[n - 1], buf[2][N], *a = buf[0], *b = buf[1];           \
    for (int i = 0; i < n; i++) a[i] = x[i];                                            \
    for (int t = 0; t < 4; t++) {                                                       \
      P("omp parallel for schedule(static)")                                            \
      for (int i = 0; i < n; i++)                                                       \
        for (int j = 0; j < 3; j++)                                                     \
          b[i] = (j ? b[i] : a[i]) * (1 - 0.1 * c) + 0.05 * d * sin(a[(i + j) % n]);    \
      double *s = a; a = b; b = s;                                                      \
      c = c * 0.9 + 0.1 * a[t];                                                         \
      P("omp parallel for schedule(dynamic, 2)")                                        \
      for (int i = 0; i < n; i++) {                                                     \
        P("omp atomic")                                                                 \
        d += 0.01 * a[i] * c;                                                           \
      }                                                                                 \
    }                                                                                   \
    for (int i = 0; i < n; i++) y[i] = a[i] * d;                                        \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
