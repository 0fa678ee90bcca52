/* adjoints of shared arrays with 2+ threads: plain adds where no other thread of the team adds
   (each thread's forward sweep records the shadow range its loads' adjoints go to; the reverse
   keeps atomics where ranges meet: openmp_ranges.py), atomic elsewhere. Loops whose threads
   read disjoint blocks (static, dynamic), blocks that share their border elements (a stencil),
   threads interleaved element by element (static, 1: every range overlaps every other), a
   scattered read, a row-parallel 2-D stencil, and a call in the region. */
#include "omp_check.h"
#define N 120
#define M 120
#define R 10                       /* rows of the 2-D view (N = R x C) */
#define C 12
__attribute__((noinline)) static double g(const double *p, int k) { return p[k] * p[k]; }
#define KERNEL(name, P)                                                                 \
  void name(const double *x, double *y, int n) {                                        \
    P("omp parallel for schedule(static)")                                              \
    for (int i = 0; i < n; i++) y[i] = x[i] * x[i] + sin(x[i]);                         \
    P("omp parallel for schedule(dynamic, 7)")                                          \
    for (int i = 0; i < n; i++) y[i] += 0.5 * g(x, i) * x[i];                           \
    P("omp parallel for schedule(static)")                                              \
    for (int i = 1; i < n - 1; i++) y[i] += x[i - 1] * x[i + 1] - 0.3 * x[i];           \
    P("omp parallel for schedule(static, 1)")                                           \
    for (int i = 0; i < n; i++) y[i] += cos(x[i]) * x[(i + 1) % n];                     \
    P("omp parallel for schedule(guided)")                                              \
    for (int i = 0; i < n; i++) y[i] += 0.1 * x[(i * 37) % n] * x[i];                   \
    P("omp parallel for schedule(static)")                                              \
    for (int r = 0; r < R; r++)                                                         \
      for (int c = 0; c < C; c++) {                                                     \
        double up = r > 0 ? x[(r - 1) * C + c] : 0, dn = r < R - 1 ? x[(r + 1) * C + c] : 0; \
        y[r * C + c] += 0.2 * (up + dn) * x[r * C + c];                                 \
      }                                                                                 \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
