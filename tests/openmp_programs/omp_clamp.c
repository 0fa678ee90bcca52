/* Clamps on firstprivate doubles, as in LULESH's energy update (`if (e_new[i] < emin) e_new[i]
   = emin;`): at -O2 LLVM passes emin as the i64 of its bits, read straight from memory, and
   does the clamp as an integer select of the double's bits followed by an i64 store. The
   captured values carry derivatives (emin is an input, emax computed from one). */
#include "omp_check.h"
#define N 21
#define M 21
#define KERNEL(name, P)                                                            \
  void name(const double *x, double *y, int n) {                                   \
    double emin = x[0], emax = x[1] * 1.5 + 0.4;                                   \
    int length = n;                                                                \
    P("omp parallel for firstprivate(length, emin, emax)")                         \
    for (int i = 0; i < length; i++) {                                             \
      y[i] = x[i] * x[i] + 0.5 * x[(i + 3) % length];                             \
      if (y[i] < emin) y[i] = emin;                                                \
      if (y[i] > emax) y[i] = emax;                                                \
    }                                                                              \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
