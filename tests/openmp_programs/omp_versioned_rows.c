/* Reverse loops versioned on the thread's exclusive range (ad/synthesis/openmp_version.py): a copy of the
   reverse loop with plain adds runs where the whole span of a loop run's adjoints is the
   thread's own, the original with per-add tests elsewhere. Shapes: a 5-point stencil with
   boundary tests whose inner loop's row offsets come from a guarded preheader (they do not
   reach the loop's exit block: the test recomputes them), two sweeps with the rows swapped, a
   row loop whose inner loop runs backwards, a local array read in a reduction loop, and rows
   of different lengths (some rows empty). With several threads the rows next to another
   thread's block take the original loop, the others the copy; a copy that took a shared row
   would lose updates (the repeated reverse sweeps and the serial copy show it). */
#include "omp_check.h"
#define R 9
#define C 7
#define N (R * C)
#define M (R * C)
#define KERNEL(name, P)                                                                   \
  void name(const double *x, double *y, int n) {                                          \
    double a[N], b[N];                                                                    \
    double f[N];                                                                          \
    for (int k = 0; k < N; k++) { a[k] = x[k]; f[k] = 0.5 * x[k] * x[k]; }                \
    for (int t = 0; t < 2; t++) {                                                         \
      P("omp parallel for schedule(static)")                                              \
      for (int i = 0; i < R; i++)                                                         \
        for (int j = 0; j < C; j++) {                                                     \
          double u = a[i * C + j];                                                        \
          double up = i > 0 ? a[(i - 1) * C + j] : 0, dn = i < R - 1 ? a[(i + 1) * C + j] : 0; \
          double lf = j > 0 ? a[i * C + j - 1] : 0, rt = j < C - 1 ? a[i * C + j + 1] : 0;    \
          b[i * C + j] = u + 0.2 * (up + dn + lf + rt - 4 * u) - 0.1 * u * u * u;          \
        }                                                                                 \
      P("omp parallel for schedule(static)")                                              \
      for (int i = 0; i < R; i++)                                                         \
        for (int j = C - 1; j >= 0; j--)                                                  \
          a[i * C + j] = b[i * C + j] * (1 + 0.05 * b[((i + 2) % R) * C + j]);              \
    }                                                                                     \
    P("omp parallel for schedule(static, 1)")                                             \
    for (int i = 0; i < R; i++) {                                                         \
      int len = (i * 3) % (C + 1);                       /* 0 .. C: some rows empty */     \
      double s = 0;                                                                       \
      for (int j = 0; j < len; j++) s += f[i * C + j] * a[i * C + j];                     \
      y[i * C] = s;                                                                       \
    }                                                                                     \
    for (int k = 0; k < M; k++)                                                           \
      if (k % C) y[k] = a[k] * a[k] + 0.5 * a[(k + n) % N];                               \
  }
KERNEL(fpar, PAR)
KERNEL(fser, SER)
CHECKS(fpar, fser)
