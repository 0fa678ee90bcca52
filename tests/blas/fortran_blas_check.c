#include <stdio.h>
#include <math.h>
#include <cblas.h>
double ddot_(const int *n, const double *x, const int *incx, const double *y, const int *incy);
double dnrm2_(const int *n, const double *x, const int *incx);
double dasum_(const int *n, const double *x, const int *incx);
void daxpy_(const int *n, const double *a, const double *x, const int *incx, double *y, const int *incy);
void dscal_(const int *n, const double *a, double *x, const int *incx);
void dgemv_(const char *t, const int *m, const int *n, const double *alpha, const double *A, const int *lda, const double *x, const int *incx, const double *beta, double *y, const int *incy);
void dger_(const int *m, const int *n, const double *alpha, const double *x, const int *incx, const double *y, const int *incy, double *A, const int *lda);
double __enzyme_autodiff(void*, ...);
double __enzyme_fwddiff(void*, ...);
enum { M = 3, N = 4 };
double f(const double *x, const double *A, double *scale) {
  int n = N, m = M, one = 1; double t[N], y[M] = {0}, B[M * N], alpha = 1.0, beta = 0.0, two = 2.0;
  for (int i = 0; i < N; i++) t[i] = x[i];
  daxpy_(&n, scale, x, &one, t, &one); dscal_(&n, scale, t, &one);
  dgemv_("N", &m, &n, &alpha, A, &m, t, &one, &beta, y, &one);
  for (int i = 0; i < M * N; i++) B[i] = A[i];
  dger_(&m, &n, &two, y, &one, t, &one, B, &m);
  return ddot_(&n, x, &one, t, &one) + dnrm2_(&m, y, &one) + dasum_(&n, t, &one) + cblas_dasum(M * N, B, 1) * 0.1;
}
static int bad;
static void chk(const char *w, double got, double want) { int ok = fabs(got - want) <= 1e-5 * (1 + fabs(want)); bad += !ok; printf("CHECK %s %.10g %.10g%s\n", w, got, want, ok ? "" : "  <-- FAILED"); }
int main() {
  double x[N] = {0.5, -1, 2, 0.3}, A[M * N], s = 0.7, dx[N] = {0}, dA[M * N] = {0}, ds = 0, h = 1e-6;
  for (int i = 0; i < M * N; i++) A[i] = sin(i + 1.0);
  __enzyme_autodiff((void*)f, x, dx, A, dA, &s, &ds);
  for (int i = 0; i < N; i++) { double v = x[i]; x[i] = v + h; double p = f(x, A, &s); x[i] = v - h; double q = f(x, A, &s); x[i] = v; chk("dx", dx[i], (p - q) / (2 * h)); }
  for (int i = 0; i < M * N; i++) { double v = A[i]; A[i] = v + h; double p = f(x, A, &s); A[i] = v - h; double q = f(x, A, &s); A[i] = v; chk("dA", dA[i], (p - q) / (2 * h)); }
  { double v = s; s = v + h; double p = f(x, A, &s); s = v - h; double q = f(x, A, &s); s = v; chk("ds", ds, (p - q) / (2 * h)); }
  double tx[N] = {1, 0, 0, 0}, tA[M * N] = {0}, ts = 0.5; tA[4] = 1;
  chk("fwd", __enzyme_fwddiff((void*)f, x, tx, A, tA, &s, &ts), dx[0] + dA[4] + 0.5 * ds);
  if (bad) printf("FAILED: %d\n", bad);
  return bad != 0;
}
