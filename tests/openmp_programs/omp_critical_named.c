/* two named critical sections with multiplicative updates (the reverse must run them in the
   reverse order of the forward one), one of them in a non-inlined function called from the
   region (an orphaned critical). exp turns the per-thread partial sums into a product that
   does not depend on how the dynamic schedule split the loop. */
#include "omp_check.h"
#define N 27
#define M 2
__attribute__((noinline)) static void scale(double *acc, double part) {
#pragma omp critical(scale_lock)
  *acc = *acc * exp(0.05 * part);
}
#define KERNEL(name, P)                                                          \
  void name(const double *x, double *y, int n) {                                 \
    y[0] = 1;                                                                    \
    y[1] = 2;                                                                    \
    P("omp parallel")                                                            \
    {                                                                            \
      double part = 0;                                                           \
      P("omp for schedule(dynamic, 2)")                                          \
      for (int i = 0; i < n; i++) part += x[i] * x[(i + 1) % n];                 \
      P("omp critical(first)")                                                   \
      y[1] = y[1] * exp(-0.03 * part);                                           \
      scale(&y[0], part);                                                        \
    }                                                                            \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
