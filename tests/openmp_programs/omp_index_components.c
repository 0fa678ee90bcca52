/* A mesh's node fields stored by component, x then y then z (`x[c]`, `x[h + c]`, `x[2h + c]`
   with h a value known at run time), gathered per element through a connectivity array: the
   three loads of a corner share one index read from memory, which the team's forward sweep
   records once (openmp_index.py), whether its GEP indexes with the index's extension or with
   the extension of the index plus the component's offset. */
#define NX 10
#define NY 8
#include "quad_mesh.h"
#define N (3 * NN)
#define M NE
#include "omp_check.h"
#define KERNEL(name, P)                                                                  \
  void name(const double *x, double *y, int n) {                                         \
    int h = n / 3;                                                                       \
    P("omp parallel for schedule(static)")                                               \
    for (int e = 0; e < NE; e++) {                                                       \
      double s = 0, p = 1;                                                               \
      for (int k = 0; k < 4; k++) {                                                      \
        int c = conn[4 * e + k];                                                         \
        double a = x[c], b = x[h + c], d = x[2 * h + c];                                 \
        s += a * b - 0.5 * d * d;                                                        \
        p *= 1 + 0.1 * a * d;                                                            \
      }                                                                                  \
      y[e] = s * p + sin(s);                                                             \
    }                                                                                    \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
