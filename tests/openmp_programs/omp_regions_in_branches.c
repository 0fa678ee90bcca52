/* Two parallel regions in the arms of a branch on a run-time flag, followed by the same
   bookkeeping of global counters with different constants (miniAMR's 7- and 27-point
   stencils): LLVM's SimplifyCFG merged the two forks into one fork of a select of the two
   outlined functions, whose derivative was never taken: the regions read and write through
   globals, so the fork had no active argument and ran as primal code, a wrong gradient with no
   error. The link step now keeps forks apart (nomerge, as the derivative markers). */
#include "omp_check.h"
#define N 23
#define M 23
static const double *src;
static double *dst;
double flops_a, flops_b;
int passes = 3;
#define KERNEL(name, P)                                                                      \
  static void name##_stencil(int n, int wide) {                                              \
    int i;                                                                                   \
    if (!wide) {                                                                             \
      P("omp parallel for")                                                                  \
      for (i = 0; i < n; i++) dst[i] = src[i] * src[(i + 1) % n];                            \
      flops_a += (double)passes * n;                                                         \
      flops_b += (double)6 * passes * n;                                                     \
    } else {                                                                                 \
      P("omp parallel for")                                                                  \
      for (i = 0; i < n; i++) dst[i] = sin(src[i]) + src[(i + n - 1) % n];                  \
      flops_a += (double)passes * n;                                                         \
      flops_b += (double)26 * passes * n;                                                    \
    }                                                                                        \
  }                                                                                          \
  void name(const double *x, double *y, int n) {                                             \
    double t[N];                                                                             \
    src = x, dst = t;                                                                        \
    name##_stencil(n, passes > 5);                                                           \
    src = t, dst = y;                                                                        \
    name##_stencil(n, passes < 5);                                                           \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
