/* Globals that carry active data into and out of parallel regions: a global array written by
   a region and read by serial code, a global scalar updated with `omp atomic` (and one under
   `omp critical`), a global pointer to a heap block written by one region and read by another
   (LLVM turns a block malloc'd once into a byte-array global), a global read by a function a
   region calls, a function-scope static array, a global array of records, a 2-D global written
   by a hand-partitioned region, a reduction into a global, a global written by `omp single`,
   lastprivate into a global, sections writing a global. Each gradient against central
   differences. Before 2026-11-30 the atomic, the critical, the heap block and the static array
   gave wrong gradients with no error (the regions were not seen as part of the call tree,
   atomics did not count as accesses, a byte array was not taken to hold floats), and the
   reduction into a global was refused (the fork's global argument got no shadow), and so was a
   callee given &G[i] inside a region (e1, e2). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
#define N 16
static double G[N];          /* written in a region, read after */
static double acc;           /* accumulated with atomic */
static double *gbuf;         /* global pointer to a heap buffer */
static double sacc;          /* accumulated in critical */

double f1(const double *x, int n) {
#pragma omp parallel for
  for (int i = 0; i < n; i++) G[i] = sin(x[i]) * x[(i + 1) % n];
  double s = 0;
  for (int i = 0; i < n; i++) s += G[i] * G[(i + 3) % n];
  return s;
}
double f2(const double *x, int n) {
  acc = 0;
#pragma omp parallel for
  for (int i = 0; i < n; i++) {
    double v = x[i] * x[i] * cos(x[(i + 2) % n]);
#pragma omp atomic
    acc += v;
  }
  return acc * acc;
}
double f3(const double *x, int n) {
#pragma omp parallel for
  for (int i = 0; i < n; i++) gbuf[i] = exp(0.3 * x[i]);
  double s = 0;
#pragma omp parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += gbuf[i] * gbuf[(i + 5) % n] * x[i];
  return s;
}
double f4(const double *x, int n) {
  sacc = 1.0;
#pragma omp parallel for
  for (int i = 0; i < n; i++) {
    double v = 1.0 + 0.1 * x[i] * x[i];
#pragma omp critical
    sacc *= v;
  }
  return sacc;
}
static double helper(int i) { return G[i] * G[i]; }
double f5(const double *x, int n) {
  for (int i = 0; i < n; i++) G[i] = x[i] * 2.0 + 1.0;
  double s = 0;
#pragma omp parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += helper(i) * x[(i + 1) % n];
  return s;
}
double f6(const double *x, int n) {
  static double loc[N];
#pragma omp parallel for
  for (int i = 0; i < n; i++) loc[i] = x[i] * x[(i + 7) % n];
  double s = 0;
  for (int i = 0; i < n; i++) s += loc[i] * loc[i];
  return sqrt(s);
}
typedef struct { double a, b; int k; } Rec;
static Rec R[N];
static double M[4][N];
static double gsum;
static double shared_s;
static double lastv;

double g1(const double *x, int n) {            /* global array of structs */
#pragma omp parallel for
  for (int i = 0; i < n; i++) { R[i].a = x[i] * x[i]; R[i].b = sin(x[i]); R[i].k = i; }
  double s = 0;
  for (int i = 0; i < n; i++) s += R[i].a * R[(i + 1) % n].b + R[i].k;
  return s;
}
double g2(const double *x, int n) {            /* parallel with manual partition, 2D global */
#pragma omp parallel
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    for (int i = t; i < n; i += nt)
      for (int r = 0; r < 4; r++) M[r][i] = x[i] * (r + 1) + cos(x[(i + r) % n]);
  }
  double s = 0;
  for (int r = 0; r < 4; r++) for (int i = 0; i < n; i++) s += M[r][i] * M[r][i];
  return s;
}
double g3(const double *x, int n) {            /* reduction into a global */
  gsum = 0;
#pragma omp parallel for reduction(+ : gsum)
  for (int i = 0; i < n; i++) gsum += x[i] * exp(0.1 * x[i]);
  return gsum * x[0];
}
double g4(const double *x, int n) {            /* single writes a global, all read it after */
  double s = 0;
#pragma omp parallel reduction(+ : s)
  {
#pragma omp single
    shared_s = x[0] * x[1] + 1.0;
#pragma omp for
    for (int i = 0; i < n; i++) s += shared_s * x[i];
  }
  return s;
}
double g5(const double *x, int n) {            /* lastprivate into a global */
#pragma omp parallel for lastprivate(lastv)
  for (int i = 0; i < n; i++) lastv = x[i] * x[i] * 3.0;
  return lastv + x[2];
}
double g6(const double *x, int n) {            /* sections writing globals */
#pragma omp parallel sections
  {
#pragma omp section
    { for (int i = 0; i < n / 2; i++) M[0][i] = x[i] * x[i]; }
#pragma omp section
    { for (int i = n / 2; i < n; i++) M[0][i] = sqrt(x[i] + 1.0); }
  }
  double s = 0;
  for (int i = 0; i < n; i++) s += M[0][i] * x[(i + 3) % n];
  return s;
}
/* a callee writing a global through its pointer parameter, called inside a region */
static double G2[N], H2[N];
__attribute__((noinline)) static void addto(double *p, double v) { *p = v * v + sin(v); }
double e1(const double *x, int n) {
#pragma omp parallel for
  for (int i = 0; i < n; i++) addto(&G2[i], x[i]);
  double s = 0;
  for (int i = 0; i < n; i++) s += G2[i] * G2[(i + 1) % n];
  return s;
}
double e2(const double *x, int n) {      /* callee in a region writing a global by name */
  for (int i = 0; i < n; i++) H2[i] = 0;
#pragma omp parallel for
  for (int i = 0; i < n; i++) { addto(&H2[i], x[i]); H2[i] *= cos(x[(i + 3) % n]); }
  double s = 0;
  for (int i = 0; i < n; i++) s += H2[i] * x[i];
  return s;
}
int fails;
double total;
/* reverse mode against central differences, forward mode against the gradient, and a second
   reverse call after the forward one (the globals' shadows start from zero in each) */
#define T(f) do { double x[N], dx[N] = {0}, dx2[N] = {0}, xp[N], v[N], jv = 0; \
  for (int i = 0; i < N; i++) { x[i] = 0.3 + 0.5 * sin(1.1 + 2.3 * i); v[i] = cos(0.7 * i); } \
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, N); \
  for (int i = 0; i < N; i++) { double h = 1e-6; memcpy(xp, x, sizeof x); xp[i] += h; double fp = f(xp, N); \
    xp[i] -= 2 * h; double fm = f(xp, N); double fd = (fp - fm) / (2 * h); jv += v[i] * dx[i]; \
    if (fabs(fd - dx[i]) > 1e-5 * (1 + fabs(fd))) { printf(#f "[%d] %g %g FAILED\n", i, dx[i], fd); fails++; } total += dx[i]; } \
  double fw = __enzyme_fwddiff((void *)f, enzyme_dup, x, v, enzyme_const, N); \
  if (fabs(fw - jv) > 1e-9 * (1 + fabs(jv))) { printf(#f " fwd %g %g FAILED\n", fw, jv); fails++; } \
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx2, enzyme_const, N); \
  for (int i = 0; i < N; i++) if (fabs(dx2[i] - dx[i]) > 1e-12 * (1 + fabs(dx[i]))) { \
    printf(#f " again[%d] %g %g FAILED\n", i, dx2[i], dx[i]); fails++; } } while (0)
int main(void) {
  gbuf = malloc(N * sizeof(double));
  T(f1); T(f2); T(f3); T(f4); T(f5); T(f6);
  T(g1); T(g2); T(g3); T(g4); T(g5); T(g6);
  T(e1); T(e2);
  printf("SUM %.17g\n", total);
  if (fails) printf("FAILED: %d check(s)\n", fails);
  return fails != 0;
}
