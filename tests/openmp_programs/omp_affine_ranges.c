/* Range tracking once per loop entry (ad/parallel/openmp_affine.py): loads in counted inner loops whose
   addresses are affine in the loop's iteration, inside row-parallel regions, where the rows a
   thread reads reach into other threads' rows. A range that missed an address another thread
   also adds to would make that add plain: a lost update, seen by the repeated reverse sweeps
   and the comparison with the serial copy. Shapes: neighbours across row ends (c - 1 at c = 0
   is the previous row's last element), a loop counting down, a stride of 2, a pointer
   iterator, a row chosen outside the inner loop (another thread's row), a triangular loop, a
   conditional load, an unsigned counter, an i32 counter widened to 64 bits. */
#include "omp_check.h"
#define R 12
#define C 10
#define N (R * C)
#define M (R * C)
#define KERNEL(name, P)                                                                    \
  void name(const double *x, double *y, int n) {                                           \
    (void)n;                                                                               \
    P("omp parallel for schedule(static)")                                                 \
    for (int r = 0; r < R; r++)                                                            \
      for (int c = 0; c < C; c++) {                                                        \
        int k = r * C + c;                                                                 \
        double lf = k > 0 ? x[k - 1] : 0, rt = k < N - 1 ? x[k + 1] : 0;                   \
        y[k] = x[k] * (lf + rt) + 0.5 * x[k];                                              \
      }                                                                                    \
    P("omp parallel for schedule(static)")                                                 \
    for (int r = 0; r < R; r++)                                                            \
      for (int c = C - 1; c >= 0; c--) y[r * C + c] += x[r * C + c] * x[((r + 3) % R) * C + c]; \
    P("omp parallel for schedule(static, 2)")                                              \
    for (int r = 0; r < R; r++)                                                            \
      for (int c = 0; c + 1 < C; c += 2)                                                   \
        y[r * C + c] += x[r * C + c] * x[r * C + c + 1] - 0.25 * x[((r + 1) % R) * C + c + 1]; \
    P("omp parallel for schedule(static)")                                                 \
    for (int r = 0; r < R; r++) {                                                          \
      const double *p = x + r * C, *e = p + C, *q = x + ((r + R - 1) % R) * C;              \
      double s = 0;                                                                        \
      for (; p != e; p++, q++) s += *p * *q;                                               \
      y[r * C] += sin(s);                                                                  \
    }                                                                                      \
    P("omp parallel for schedule(dynamic, 1)")                                             \
    for (int r = 0; r < R; r++)                                                            \
      for (int c = r % C; c < C; c++) {                                                    \
        double t = x[r * C + c];                                                           \
        if (c % 3 == 0) t += x[(R - 1 - r) * C + c] * t;                                   \
        y[r * C + c] += 0.3 * t * t;                                                       \
      }                                                                                    \
    P("omp parallel for schedule(static)")                                                 \
    for (int r = 0; r < R; r++)                                                            \
      for (unsigned u = 1; u < C; u++) y[r * C + u] += 0.2 * x[r * C + u - 1] * x[(r * C + u + 7) % N]; \
    P("omp parallel for schedule(static)")                                                 \
    for (long r = 0; r < R; r++)                                                           \
      for (int c = 0; c < C; c++) {                                                        \
        long k = r * C + (long)c;                                                          \
        y[k] += cos(x[k]) * x[(k + C) % N];                                                \
      }                                                                                    \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
