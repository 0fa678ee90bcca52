/* A density loop over neighbour lists (in the style of a molecular dynamics code's EAM force),
   in a function called by one thread of a parallel region: per atom i, an inner loop over its
   neighbours j adds a pair term into the atom's sum and, for neighbours that exist (`j < n`),
   into the neighbour's density; then the per-atom sums are added; the outputs are the densities squared.
   Several of the reverse loops are versioned on the thread's exclusive range
   (ad/synthesis/openmp_version.py): each copy needs names of its own (two copies named alike
   gave two definitions of one value: the derivative IR did not verify). */
#include "omp_check.h"
#define NA 9
#define NR 6
#define K 3
#define N NA
#define M NR
typedef struct { double *rho; } Dens;
static volatile int neighbours = K;   /* (not a constant: the inner loop stays a loop) */
__attribute__((noinline)) static void density(Dens *s, const double *x, const int *nb, int k,
                                              int n) {
  for (int i = 0; i < n; i++) s->rho[i] = 0.0;
  for (int i = 0; i < n; i++) {
    double ri = 0.0;
    for (int jj = 0; jj < k; jj++) {
      int j = nb[i * k + jj];
      double d = x[i] - x[j];
      double v = d * d * d;
      ri += v;
      if (j < n) s->rho[j] += v;
    }
    s->rho[i] += ri;
  }
}
#define KERNEL(name, P)                                                                     \
  void name(const double *x, double *y, int n) {                                            \
    int nb[NR * K];                                                                         \
    for (int i = 0; i < NR; i++)                                                            \
      for (int jj = 0; jj < K; jj++) nb[i * K + jj] = (i + 1 + 2 * jj) % NA;                \
    Dens s = {y};                                                                           \
    (void)n;                                                                                \
    P("omp parallel")                                                                       \
    {                                                                                       \
      P("omp master")                                                                       \
      density(&s, x, nb, neighbours, NR);                                                   \
    }                                                                                       \
    for (int i = 0; i < NR; i++) y[i] *= y[i];                                              \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
