/* An element loop in the style of a hydrodynamics code's hourglass forces: each element gathers
   its corners' coordinates, x[c] and x[h + c], then, in a loop over the components d = 0..2 that
   stays a loop, its corners' velocities x[d * h + c] (node fields stored by component, h known
   at run time): the optimizer reads the row x + c once per corner outside the component loop
   and moves along it by d * h inside. The team's forward sweep records each corner's index once
   (openmp_index._rows), and at the element loop's exits each component's addresses from it,
   instead of three ranges per corner and element. */
#define NX 10
#define NY 8
#include "quad_mesh.h"
#define N (3 * NN)
#define M (4 * NE)
#include "omp_check.h"
static const double G[2][4] = {{1, -1, 1, -1}, {1, 1, -1, -1}};
#define KERNEL(name, P)                                                                  \
  void name(const double *x, double *y, int n) {                                         \
    int h = n / 3;                                                                       \
    P("omp parallel for schedule(static)")                                               \
    for (int e = 0; e < NE; e++) {                                                       \
      const int *cs = conn + 4 * e;                                                      \
      double area = 0;                                                                   \
      for (int k = 0; k < 4; k++) {                                                      \
        int a = cs[k], b = cs[(k + 1) & 3];                                              \
        area += x[a] * x[h + b] - x[b] * x[h + a];                                       \
      }                                                                                  \
      double coef = 0.1 + 0.05 * area * area;                                            \
      double r[3];                                                                       \
      _Pragma("clang loop unroll(disable)")                                              \
      for (int d = 0; d < 3; d++) {                                                      \
        double hm[2];                                                                    \
        for (int k = 0; k < 2; k++) {                                                    \
          hm[k] = 0;                                                                     \
          for (int c = 0; c < 4; c++) hm[k] += G[k][c] * x[d * h + cs[c]];               \
        }                                                                                \
        r[d] = coef * (hm[0] * hm[0] + hm[1] * hm[1]) + hm[0] * hm[1];                    \
      }                                                                                  \
      for (int d = 0; d < 3; d++) y[4 * e + d] = r[d] * (1 + 0.2 * r[d]);                \
      y[4 * e + 3] = area;                                                               \
    }                                                                                    \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
