/* An element loop that reads its element's own block of a shared array in a loop over the
   components that stays a loop, as a hydrodynamics code reads its corner forces: the block's
   addresses are affine in the component and in the element, so the team's forward sweep tracks
   their span once where the thread's chunk of elements starts (openmp_affine._lift), not once
   per element; the element loop's exit test compares its int index widened to 64 bits by its
   truncation (exit_count: counted modulo 2^32). */
#define NE 150
#define N (3 * NE)
#define M NE
#include "omp_check.h"
#define KERNEL(name, P)                                                                  \
  void name(const double *x, double *y, int n) {                                         \
    P("omp parallel for schedule(static)")                                               \
    for (int e = 0; e < NE; e++) {                                                       \
      double s = 0;                                                                      \
      _Pragma("clang loop unroll(disable)")                                              \
      for (int d = 0; d < 3; d++) s += x[3 * e + d] * x[3 * e + d] * (1 + d);            \
      y[e] = s * (1 + 0.1 * x[3 * e]) + x[3 * e + 1] * x[3 * e + 2];                     \
    }                                                                                    \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
