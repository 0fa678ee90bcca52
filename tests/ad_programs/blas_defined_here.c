/* A program that brings its own Fortran-style BLAS routines (reference loops, as Enzyme's
   blas_inline.h does) and links no BLAS library: their calls are differentiated as the code
   they are, not through the BLAS adjoint rules (which call CBLAS, absent here). noinline keeps
   the calls until differentiation. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

__attribute__((noinline)) double ddot_(const int *n, const double *x, const int *incx, const double *y, const int *incy) {
  double s = 0;
  for (int i = 0; i < *n; i++) s += x[i * *incx] * y[i * *incy];
  return s;
}
/* C = alpha A B + beta C, column-major, no transposes */
__attribute__((noinline)) void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const double *alpha, const double *A, const int *lda, const double *B,
            const int *ldb, const double *beta, double *C, const int *ldc) {
  (void)ta, (void)tb;
  for (int j = 0; j < *n; j++)
    for (int i = 0; i < *m; i++) {
      double s = 0;
      for (int l = 0; l < *k; l++) s += A[i + l * *lda] * B[l + j * *ldb];
      C[i + j * *ldc] = *alpha * s + *beta * C[i + j * *ldc];
    }
}

enum { N = 3 };
/* f(A) = sum of (A A) entries weighted by w, plus w . diag(A) */
double f(const double *A) {
  static const double w[N * N] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  double C[N * N] = {0}, one = 1, zero = 0, d[N];
  int n = N, nn = N * N, inc = 1;
  dgemm_("N", "N", &n, &n, &n, &one, A, &n, A, &n, &zero, C, &n);
  for (int i = 0; i < N; i++) d[i] = A[i * (N + 1)];
  return ddot_(&nn, w, &inc, C, &inc) + ddot_(&n, w, &inc, d, &inc);
}

int main(void) {
  double A[N * N], dA[N * N] = {0}, h = 1e-6;
  for (int i = 0; i < N * N; i++) A[i] = sin(1.0 + i);
  __enzyme_autodiff((void *)f, A, dA);
  for (int i = 0; i < N * N; i++) {
    double keep = A[i];
    A[i] = keep + h;
    double up = f(A);
    A[i] = keep - h;
    double down = f(A);
    A[i] = keep;
    char name[32];
    snprintf(name, sizeof name, "dA[%d]", i);
    check(name, dA[i], (up - down) / (2 * h));
  }
  double v[N * N], dot = 0;
  for (int i = 0; i < N * N; i++) {
    v[i] = cos(2.0 * i);
    dot += v[i] * dA[i];
  }
  check("dot_fwd_rev", __enzyme_fwddiff((void *)f, A, v), dot);
  return report();
}
