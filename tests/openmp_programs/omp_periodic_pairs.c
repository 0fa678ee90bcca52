/* Reads whose hull is the whole array for every thread: a pair loop over a periodic neighbour
   list (each thread's own block, and the far end of the array at the wrap), and a cell loop
   reading halo copies kept at the array's end (CoMD's link cells). Each thread's forward sweep
   records two ranges per array (openmp_ranges.py: its own block and the far run), so the adds
   into its block are plain; with one range (their hull) every add was atomic. The part of a
   range another thread's range touches stays atomic: the wrap and the halo. The pair loop's
   reduction clause (an atomic add of the partial sums in libomp's atomic path) and its assert
   (a call that does not return) leave the region's adds range-tested: they made every add of
   CoMD's force loop atomic. */
#include <assert.h>
#define N 160                      /* 128 cells and 32 halo copies of the first and last 16 */
#define M 128
#define CELLS 128
#define HALO 16
#define NB 6
static int nbr[CELLS * NB];
#define SETUP                                                                            \
  for (int i = 0; i < CELLS; i++)                                                        \
    for (int k = 0; k < NB; k++) nbr[i * NB + k] = (i + k - NB / 2 + CELLS) % CELLS
#include "omp_check.h"
#define KERNEL(name, P)                                                                  \
  void name(const double *x, double *y, int n) {                                         \
    double tot = 0;                                                                      \
    (void)n;                                                                             \
    P("omp parallel for schedule(static) reduction(+ : tot)")                            \
    for (int i = 0; i < CELLS; i++) {                                                    \
      double e = 0;                                                                      \
      for (int k = 0; k < NB; k++) {                                                     \
        int j = nbr[i * NB + k];                                                         \
        assert(j >= 0 && j < CELLS);                                                     \
        double d = x[i] - x[j], r = 1.0 / (d * d + 1.0);                                 \
        e += r * r * r;                                                                  \
      }                                                                                  \
      y[i] = e;                                                                          \
      tot += e * x[i];                                                                   \
    }                                                                                    \
    y[0] += 0.01 * tot;                                                                  \
    P("omp parallel for schedule(static)")                                               \
    for (int i = 0; i < CELLS; i++) {                                                    \
      double left = i > 0 ? x[i - 1] : x[CELLS + HALO + (i % HALO)];                    \
      double right = i < CELLS - 1 ? x[i + 1] : x[CELLS + (i % HALO)];                   \
      y[i] += 0.25 * x[i] * (left + right) + 0.1 * sin(x[i]);                            \
    }                                                                                    \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
