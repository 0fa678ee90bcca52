/* Matrix-vector product y = A x with a seeded dy: the vector-Jacobian products with respect to
   x (A constant, y dupnoneed) and with respect to A. */
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
int enzyme_dup, enzyme_dupnoneed, enzyme_const;
void __enzyme_autodiff(void *, ...);

void matvec(const double *A, const double *x, double *y, int m, int n) {
  for (int i = 0; i < m; i++) {
    double s = 0;
    for (int j = 0; j < n; j++) s += A[i * n + j] * x[j];
    y[i] = s;
  }
}

int main(void) {
  double A[M * N], x[N] = {1, -0.5, 2, 0.25};
  for (int k = 0; k < M * N; k++) A[k] = 0.1 * k - 0.4;
  const double seed[M] = {1, -2, 0.5};
  double y[M], dy[M], dx[N] = {0};
  for (int i = 0; i < M; i++) dy[i] = seed[i];
  __enzyme_autodiff((void *)matvec, enzyme_const, A, enzyme_dup, x, dx, enzyme_dupnoneed, y, dy,
                    enzyme_const, M, enzyme_const, N);
  for (int j = 0; j < N; j++) {
    double want = 0;
    for (int i = 0; i < M; i++) want += A[i * N + j] * seed[i];
    checki("dx", j, dx[j], want);
  }
  double dA[M * N] = {0};
  for (int i = 0; i < M; i++) dy[i] = seed[i];
  __enzyme_autodiff((void *)matvec, enzyme_dup, A, dA, enzyme_const, x, enzyme_dup, y, dy,
                    enzyme_const, M, enzyme_const, N);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) checki("dA", i * N + j, dA[i * N + j], seed[i] * x[j]);
  for (int i = 0; i < M; i++) {
    double want = 0;
    for (int j = 0; j < N; j++) want += A[i * N + j] * x[j];
    checki("y", i, y[i], want);
  }
  return report();
}
