#include <cblas.h>
#include <stdio.h>
#include <math.h>
double __enzyme_autodiff(void*, ...);
double __enzyme_fwddiff(void*, ...);
int enzyme_const, enzyme_dup, enzyme_out;
enum { M = 3, N = 4, K = 2 };
double f(const double *x, const double *y, double a) {
  double t[N]; cblas_dcopy(N, y, 1, t, 1); cblas_daxpy(N, a, x, 1, t, 1); cblas_dscal(N, a, t, 1);
  return cblas_ddot(N, x, 1, t, 1) + cblas_dnrm2(N, t, 1);
}
double g(const double *A, const double *x, const double *B) {
  double y[M] = {1, 2, 3}, C[M * K], z[N];
  cblas_dgemv(CblasRowMajor, CblasNoTrans, M, N, 2.0, A, N, x, 1, 0.5, y, 1);
  cblas_dgemv(CblasRowMajor, CblasTrans, M, N, 1.0, A, N, y, 1, 0.0, z, 1);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, K, N, 1.5, A, N, B, N, 0.0, C, K);
  double s = cblas_ddot(N, z, 1, z, 1);
  for (int i = 0; i < M * K; i++) s += C[i] * C[i];
  return s;
}
static int bad;
static void chk(const char *w, double got, double want) { int ok = fabs(got-want) <= 1e-5*(1+fabs(want)); if (!ok) bad++; printf("CHECK %s %g %g%s\n", w, got, want, ok ? "" : " <-- FAILED"); }
int main() {
  double x[N] = {0.5, -1, 2, 0.3}, y[N] = {1, 0.2, -0.7, 1.1}, a = 0.8, dx[N] = {0}, dy[N] = {0};
  double da = __enzyme_autodiff((void*)f, x, dx, y, dy, a);
  double h = 1e-6;
  for (int i = 0; i < N; i++) { double s = x[i]; x[i] = s + h; double p = f(x, y, a); x[i] = s - h; double q = f(x, y, a); x[i] = s; chk("f.dx", dx[i], (p-q)/(2*h));
    s = y[i]; y[i] = s + h; p = f(x, y, a); y[i] = s - h; q = f(x, y, a); y[i] = s; chk("f.dy", dy[i], (p-q)/(2*h)); }
  chk("f.da", da, (f(x, y, a+h) - f(x, y, a-h))/(2*h));
  double vx[N] = {1, 0, 0, 0}, vy[N] = {0, 1, 0, 0};
  chk("f.fwd", __enzyme_fwddiff((void*)f, x, vx, y, vy, a, 0.5), dx[0] + dy[1] + 0.5*da);
  double A[M*N], B[K*N], dA[M*N] = {0}, dB[K*N] = {0}, dx2[N] = {0};
  for (int i = 0; i < M*N; i++) A[i] = sin(i + 1.0);
  for (int i = 0; i < K*N; i++) B[i] = cos(i + 0.5);
  __enzyme_autodiff((void*)g, A, dA, x, dx2, B, dB);
  for (int i = 0; i < M*N; i++) { double s = A[i]; A[i] = s + h; double p = g(A, x, B); A[i] = s - h; double q = g(A, x, B); A[i] = s; chk("g.dA", dA[i], (p-q)/(2*h)); }
  for (int i = 0; i < N; i++) { double s = x[i]; x[i] = s + h; double p = g(A, x, B); x[i] = s - h; double q = g(A, x, B); x[i] = s; chk("g.dx", dx2[i], (p-q)/(2*h)); }
  for (int i = 0; i < K*N; i++) { double s = B[i]; B[i] = s + h; double p = g(A, x, B); B[i] = s - h; double q = g(A, x, B); B[i] = s; chk("g.dB", dB[i], (p-q)/(2*h)); }
  double tA[M*N] = {0}, tx[N] = {0}, tB[K*N] = {0}; tA[5] = 1; tx[2] = 1; tB[3] = 1;
  chk("g.fwd", __enzyme_fwddiff((void*)g, A, tA, x, tx, B, tB), dA[5] + dx2[2] + dB[3]);
  if (bad) printf("FAILED: %d\n", bad);
  return bad != 0;
}
