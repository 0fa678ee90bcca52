// C++: std::copy of each thread's chunk of a shared array inside a parallel region (PENNANT's
// Hydro::doCycle saves the zone volumes so, chunk by chunk): a memmove whose adjoint adds into
// memory other threads also reach. The copied records are all doubles, so the adjoint is an
// atomic add per double over the whole copy (it was refused: "the adjoint of a copy of
// records ... has no atomic adjoint here").
#include <algorithm>
#include <vector>
#include "omp_check.h"
#define N 40
#define M 40
#define CHUNK 7
#define KERNEL(name, P)                                                                \
  extern "C" void name(const double *x, double *y, int n) {                            \
    std::vector<double> vol(n), vol0(n);                                               \
    for (int i = 0; i < n; i++) vol[i] = x[i] * x[i] + 0.5 * x[(i + 3) % n];           \
    int nchunks = (n + CHUNK - 1) / CHUNK;                                             \
    P("omp parallel for schedule(static)")                                             \
    for (int c = 0; c < nchunks; c++) {                                                \
      int lo = c * CHUNK, hi = std::min(n, lo + CHUNK);                                \
      std::copy(vol.begin() + lo, vol.begin() + hi, vol0.begin() + lo);                \
      for (int i = lo; i < hi; i++) vol[i] = vol[i] * (1.0 + 0.1 * vol0[i]);           \
    }                                                                                  \
    for (int i = 0; i < n; i++) y[i] = vol[i] + vol0[(i + 5) % n] * x[i];              \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
