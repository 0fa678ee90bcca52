/* Least squares loss 0.5 |A x - b|^2 (b constant data, residual started at -b[i]),
   differentiated with respect to both A and x. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
static void checki(const char *name, int i, double got, double want) {
  char buf[64];
  snprintf(buf, sizeof buf, "%s[%d]", name, i);
  check(buf, got, want);
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
#define M 3
#define N 4
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random direction entries */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

double lsq(const double *A, const double *x, const double *b, int m, int n) {
  double loss = 0;
  for (int i = 0; i < m; i++) {
    double r = -b[i];
    for (int j = 0; j < n; j++) r += A[i * n + j] * x[j];
    loss += 0.5 * r * r;
  }
  return loss;
}

int main(void) {
  double A[M * N], x[N] = {1, -0.5, 2, 0.25}, b[M] = {0.5, 1, -1};
  for (int k = 0; k < M * N; k++) A[k] = 0.1 * k - 0.4;
  double dA[M * N] = {0}, dx[N] = {0}, r[M];
  __enzyme_autodiff((void *)lsq, enzyme_dup, A, dA, enzyme_dup, x, dx, enzyme_const, b,
                    enzyme_const, M, enzyme_const, N);
  for (int i = 0; i < M; i++) {
    r[i] = -b[i];
    for (int j = 0; j < N; j++) r[i] += A[i * N + j] * x[j];
  }
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) checki("dA", i * N + j, dA[i * N + j], r[i] * x[j]);
  for (int j = 0; j < N; j++) {
    double want = 0;
    for (int i = 0; i < M; i++) want += A[i * N + j] * r[i];
    checki("dx", j, dx[j], want);
  }
  /* forward/reverse dot test: the tangent along a direction (vA, vx) equals it . gradient */
  double vA[M * N], vx[N], vg = 0;
  for (int k = 0; k < M * N; k++) { vA[k] = rnd(k); vg += vA[k] * dA[k]; }
  for (int j = 0; j < N; j++) { vx[j] = rnd(M * N + j); vg += vx[j] * dx[j]; }
  check("dot_lsq", __enzyme_fwddiff((void *)lsq, enzyme_dup, A, vA, enzyme_dup, x, vx, enzyme_const, b,
                                    enzyme_const, M, enzyme_const, N), vg);
  return report();
}
