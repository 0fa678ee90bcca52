/* nested parallel regions: a region calls a non-inlined function with its own region
   (num_threads(2) at both levels), with nesting enabled (two active levels: teams inside
   teams, each inner team with its own per-thread tapes). */
#include <omp.h>
#define SETUP omp_set_max_active_levels(2)
#include "omp_check.h"
#define N 24
#define M 24
__attribute__((noinline)) static void inner(const double *x, double *y, int lo, int hi) {
#pragma omp parallel for num_threads(2)
  for (int i = lo; i < hi; i++) y[i] = x[i] * x[(i + 5) % N] + sin(x[i]);
}
#define KERNEL(name, P)                                                          \
  void name(const double *x, double *y, int n) {                                 \
    P("omp parallel for num_threads(2)")                                         \
    for (int h = 0; h < 2; h++) inner(x, y, h * n / 2, (h + 1) * n / 2);         \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
