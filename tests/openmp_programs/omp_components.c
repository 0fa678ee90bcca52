/* the components of node data kept in one block, x[d * nn + node] (C's struct-of-arrays in one
   allocation, a Fortran x(nn, 3)), gathered by elements through a connectivity table in a
   parallel loop: each component's loads form their own address class (openmp_ranges.load_class,
   the index part fixed in the loop), so interior adds stay plain. A second loop also reads the
   same memory through a table that indexes across components, whose class overlaps the others:
   a thread's exclusive range excludes every class of every other thread, so the adds stay
   atomic where another thread may add too. */
#define NN 40                      /* nodes; x holds 3 components of each */
#define N (3 * NN)
#define NE 39                      /* elements: nodes e and e + 1 */
#define M (2 * NE)
static int conn[2 * NE], cross[NE];
#define SETUP                                                                            \
  for (int e = 0; e < NE; e++) {                                                          \
    conn[2 * e] = e; conn[2 * e + 1] = e + 1;                                             \
    cross[e] = (e * 17 + 5) % N;   /* anywhere in x, any component */                     \
  }
#include "omp_check.h"
#define KERNEL(name, P)                                                                   \
  void name(const double *x, double *y, int n) {                                          \
    int nn = n / 3;                                                                       \
    P("omp parallel for schedule(static)")                                                \
    for (int e = 0; e < NE; e++) {                                                        \
      int a = conn[2 * e], b = conn[2 * e + 1];                                           \
      double dx = x[b] - x[a], dy = x[nn + b] - x[nn + a];                                \
      double dz = x[2 * nn + b] - x[2 * nn + a];                                          \
      y[e] = sqrt(dx * dx + dy * dy + dz * dz + 0.1);                                     \
    }                                                                                     \
    P("omp parallel for schedule(static)")                                                \
    for (int e = 0; e < NE; e++) {                                                        \
      int a = conn[2 * e];                                                                \
      y[NE + e] = x[cross[e]] * x[nn + a] + sin(x[2 * nn + a]);                           \
    }                                                                                     \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
