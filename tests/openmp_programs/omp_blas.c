/* BLAS calls inside a parallel loop: every iteration multiplies its own block of x by a matrix
   all threads share (W, computed from x), with a dgemm_ the program defines itself (the Reference
   BLAS interface: its calls take the BLAS rule, rules/blas.py). The reverse of each call adds
   into the shadow of the shared W: the threads take turns (a critical section); without that the
   gradient was wrong with 2 threads or more, and with no error. */
#include "omp_check.h"
#define N 24
#define M 24
#define K 4

/* C := alpha op(A) op(B) + beta C, column-major, every argument by reference */
__attribute__((noinline)) void dgemm_(const char *ta, const char *tb, const int *m,
                                      const int *n, const int *k, const double *alpha,
                                      const double *a, const int *lda, const double *b,
                                      const int *ldb, const double *beta, double *c,
                                      const int *ldc) {
  int tra = *ta != 'N' && *ta != 'n', trb = *tb != 'N' && *tb != 'n';
  for (int j = 0; j < *n; j++)
    for (int i = 0; i < *m; i++) {
      double s = 0;
      for (int l = 0; l < *k; l++)
        s += (tra ? a[l + i * *lda] : a[i + l * *lda]) * (trb ? b[j + l * *ldb] : b[l + j * *ldb]);
      c[i + j * *ldc] = *alpha * s + (*beta == 0 ? 0 : *beta * c[i + j * *ldc]);
    }
}

#define KERNEL(name, P)                                                                 \
  void name(const double *x, double *y, int n) {                                        \
    double w[K * K];                                                                    \
    for (int i = 0; i < K * K; i++) w[i] = 0.3 * x[i % n] + (i % (K + 1) == 0);         \
    P("omp parallel for schedule(static)")                                              \
    for (int blk = 0; blk < n / K; blk++) {                                             \
      int k = K, one = 1;                                                               \
      double alpha = 1.0, beta = 0.0, out[K];                                           \
      dgemm_("T", "N", &k, &one, &k, &alpha, w, &k, x + blk * K, &k, &beta, out, &k);   \
      for (int i = 0; i < K; i++) y[blk * K + i] = sin(out[i]);                         \
    }                                                                                   \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
