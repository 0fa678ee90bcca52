/* Shared checks of the OpenMP corpus (tests/test_openmp.py). A program defines its kernel twice
   from one macro, KERNEL(name, P): P(...) expands to a pragma in the parallel copy and to
   nothing in the serial one. CHECKS(par, ser) then checks, for y = f(x) with N inputs and M
   outputs and a weight vector w:
   - reverse mode of the parallel copy: grad <w, f(x)> against central finite differences of the
     parallel primal and against the reverse mode of the serial copy;
   - the parallel reverse gradient repeated REPS times (races show as differing results);
   - forward mode of the parallel copy: J v against the serial forward mode, and the dot-product
     test <J v, w> == <v, J^T w>;
   - vector forward mode (width 2) of the parallel copy: lanes J v and J x against width 1.
   Prints `CHECK name got expected` lines and `SUM <value>` (compared across thread counts by
   the test); exits non-zero on a mismatch. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#ifdef __cplusplus
extern "C" {
#endif
extern int enzyme_dup, enzyme_const, enzyme_width, enzyme_dupv;
void __enzyme_autodiff(void *, ...);
void __enzyme_fwddiff(void *, ...);
#ifdef __cplusplus
}
#endif
#ifndef SETUP
#define SETUP (void)0   /* a program's own setup at the start of main */
#endif
#define PAR(s) _Pragma(s)
#define SER(s)
#define REPS 20
static int failed;
static void check(const char *name, int i, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1.0 + fabs(want));
  printf("CHECK %s[%d] %.15g %.15g%s\n", name, i, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
static double rnd(int k) { return sin(1.3 + 7.1 * k); }
static double wsum(const double *w, const double *y, int m) {
  double s = 0;
  for (int j = 0; j < m; j++) s += w[j] * y[j];
  return s;
}
#define CHECKS(par, ser)                                                                    \
  int main(void) {                                                                          \
    static double x[N], dx[N], dxs[N], dx0[N], v[N], y[M], w[M], dy[M], yt[M], yts[M], xp[N];\
    SETUP;                                                                                  \
    for (int i = 0; i < N; i++) { x[i] = 0.5 + 0.3 * rnd(i); v[i] = rnd(100 + i); }         \
    for (int j = 0; j < M; j++) w[j] = rnd(200 + j);                                        \
    for (int r = 0; r < REPS; r++) {                                                        \
      memset(dx, 0, sizeof dx);                                                             \
      memcpy(dy, w, sizeof dy);                                                             \
      __enzyme_autodiff((void *)par, enzyme_dup, x, dx, enzyme_dup, y, dy, enzyme_const, N);\
      if (r == 0) memcpy(dx0, dx, sizeof dx);                                               \
      else for (int i = 0; i < N; i++)                                                      \
        if (fabs(dx[i] - dx0[i]) > 1e-12 * (1 + fabs(dx0[i]))) check("repeat", i, dx[i], dx0[i], 1e-12);\
    }                                                                                       \
    memcpy(dy, w, sizeof dy);                                                               \
    __enzyme_autodiff((void *)ser, enzyme_dup, x, dxs, enzyme_dup, y, dy, enzyme_const, N); \
    for (int i = 0; i < N; i++) {                                                           \
      double h = 1e-6, fp, fm;                                                              \
      memcpy(xp, x, sizeof xp); xp[i] += h; par(xp, y, N); fp = wsum(w, y, M);              \
      memcpy(xp, x, sizeof xp); xp[i] -= h; par(xp, y, N); fm = wsum(w, y, M);              \
      check("rev_fd", i, dx0[i], (fp - fm) / (2 * h), 1e-5);                                \
      check("rev_serial", i, dx0[i], dxs[i], 1e-10);                                        \
    }                                                                                       \
    memset(yt, 0, sizeof yt);                                                               \
    __enzyme_fwddiff((void *)par, enzyme_dup, x, v, enzyme_dup, y, yt, enzyme_const, N);    \
    __enzyme_fwddiff((void *)ser, enzyme_dup, x, v, enzyme_dup, y, yts, enzyme_const, N);   \
    for (int j = 0; j < M; j++) check("fwd_serial", j, yt[j], yts[j], 1e-10);               \
    static double v2[2][N], y2[2][M], yx[M];                                                \
    memcpy(v2[0], v, sizeof v); memcpy(v2[1], x, sizeof x);                                 \
    __enzyme_fwddiff((void *)par, enzyme_width, 2, enzyme_dupv, sizeof v2[0], x, v2,        \
                     enzyme_dupv, sizeof y2[0], y, y2, enzyme_const, N);                    \
    __enzyme_fwddiff((void *)ser, enzyme_dup, x, x, enzyme_dup, y, yx, enzyme_const, N);    \
    for (int j = 0; j < M; j++) {                                                           \
      check("vec_lane0", j, y2[0][j], yts[j], 1e-10);                                       \
      check("vec_lane1", j, y2[1][j], yx[j], 1e-10);                                        \
    }                                                                                       \
    double jv = wsum(w, yt, M), vjt = 0, sum = 0;                                           \
    for (int i = 0; i < N; i++) { vjt += v[i] * dx0[i]; sum += dx0[i]; }                    \
    check("dot", 0, jv, vjt, 1e-10);                                                        \
    printf("SUM %.17g %.17g\n", sum, jv);                                                   \
    if (failed) printf("FAILED: %d check(s)\n", failed);                                    \
    return failed != 0;                                                                     \
  }
