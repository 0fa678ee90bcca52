/* A region whose threads zero their part of a shared scratch array (a loop the optimizer makes a
   memset), report bad input before exiting (fprintf, then exit: blocks that never return) and
   report unusual input and go on (fprintf alone), as LULESH's equation of state and its
   artificial viscosity do. None of them adds into shared memory in the reverse sweep (memset's
   reverse zeroes the shadow; blocks that never return have no reverse, fprintf no derivative),
   so the region keeps its ranges and most adds stay plain; before, any one of them made every
   add of the region atomic. */
#include <stdio.h>
#include <stdlib.h>
#define N 256
#define M 256
#include "omp_check.h"
#define KERNEL(name, P)                                                                  \
  void name(const double *x, double *y, int n) {                                         \
    double *work = malloc(M * sizeof(double));                                           \
    (void)n;                                                                             \
    P("omp parallel")                                                                    \
    {                                                                                    \
      P("omp for schedule(static)")                                                      \
      for (int i = 0; i < M; i++) work[i] = 0;                                           \
      P("omp for schedule(static)")                                                      \
      for (int i = 0; i < M; i++) {                                                      \
        if (x[i] < -100.0) {                                                             \
          fprintf(stderr, "x[%d] = %g is out of range\n", i, x[i]);                      \
          exit(1);                                                                       \
        }                                                                                \
        if (x[i] > 100.0)                                                                \
          fprintf(stderr, "x[%d] = %g is large\n", i, x[i]);                             \
        work[i] += x[i] * x[i];                                                          \
        y[i] = sin(work[i]) + (i + 1 < N ? x[i] * x[i + 1] : 0.0);                       \
      }                                                                                  \
    }                                                                                    \
    free(work);                                                                          \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
