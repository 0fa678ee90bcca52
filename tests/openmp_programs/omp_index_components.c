/* A mesh's node fields stored by component, x then y then z (`x[c]`, `x[h + c]`, `x[2h + c]`
   with h a value known at run time), gathered per element through a connectivity array: the
   three loads of a corner share one index read from memory, which the team's forward sweep
   records once (openmp_index.py), whether its GEP indexes with the index's extension or with
   the extension of the index plus the component's offset. */
#define NX 10
#define NY 8
#define NN ((NX + 1) * (NY + 1))
#define NE (NX * NY)
#define N (3 * NN)
#define M NE
static int conn[4 * NE];
#define SETUP                                                                            \
  for (int j = 0; j < NY; j++)                                                           \
    for (int i = 0; i < NX; i++) {                                                       \
      int e = j * NX + i, n0 = j * (NX + 1) + i;                                         \
      conn[4 * e] = n0, conn[4 * e + 1] = n0 + 1;                                        \
      conn[4 * e + 2] = n0 + NX + 2, conn[4 * e + 3] = n0 + NX + 1;                      \
    }
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
