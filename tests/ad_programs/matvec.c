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
/* vector forward mode: lane k (entry i >= 0) of a width-N call versus a width-1 call */
static void checkv(const char *name, int lane, int i, double got, double want) {
  char buf[64];
  if (i < 0) snprintf(buf, sizeof buf, "vec_%s_%d", name, lane);
  else snprintf(buf, sizeof buf, "vec_%s_%d_%d", name, lane, i);
  check(buf, got, want);
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
#define M 3
#define N 4
int enzyme_dup, enzyme_dupnoneed, enzyme_const, enzyme_width, enzyme_dupv, enzyme_dupnoneedv;
void __enzyme_autodiff(void *, ...);
void __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }
static double dotp(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

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
  /* dot test, A and x both active: forward (vA, vx) -> ty = J v, reverse seeded with w ->
     (dA, dx) = J^T w; then ty . w == vA . dA + vx . dx */
  double vA[M * N], vx[N], ty[M] = {0}, w[M];
  for (int k = 0; k < M * N; k++) vA[k] = rnd(k);
  for (int j = 0; j < N; j++) vx[j] = rnd(M * N + j);
  for (int i = 0; i < M; i++) w[i] = rnd(M * N + N + i);
  __enzyme_fwddiff((void *)matvec, enzyme_dup, A, vA, enzyme_dup, x, vx, enzyme_dup, y, ty,
                   enzyme_const, M, enzyme_const, N);
  for (int k = 0; k < M * N; k++) dA[k] = 0;
  for (int j = 0; j < N; j++) dx[j] = 0;
  for (int i = 0; i < M; i++) dy[i] = w[i];
  __enzyme_autodiff((void *)matvec, enzyme_dup, A, dA, enzyme_dup, x, dx, enzyme_dup, y, dy,
                    enzyme_const, M, enzyme_const, N);
  check("dot_matvec", dotp(ty, w, M), dotp(vA, dA, M * N) + dotp(vx, dx, N));
  for (int i = 0; i < M; i++) ty[i] = 0;   /* same forward call, primal output not needed */
  __enzyme_fwddiff((void *)matvec, enzyme_dup, A, vA, enzyme_dup, x, vx, enzyme_dupnoneed, y, ty,
                   enzyme_const, M, enzyme_const, N);
  check("dot_matvec_dupnoneed", dotp(ty, w, M), dotp(vA, dA, M * N) + dotp(vx, dx, N));
  /* vector forward mode, width 4: A by dupv, x by dup, y by dupnoneedv; then width 2 with A
     constant and y dup. Each lane's output shadow versus a width-1 call along that direction */
  double vA4[4][M * N], vx4[4][N], ty4[4][M], ty1[M];
  for (int k = 0; k < 4; k++) {
    for (int i = 0; i < M * N; i++) vA4[k][i] = rnd(40 + k * 20 + i);
    for (int j = 0; j < N; j++) vx4[k][j] = rnd(40 + k * 20 + M * N + j);
  }
  __enzyme_fwddiff((void *)matvec, enzyme_width, 4, enzyme_dupv, sizeof vA4[0], A, vA4,
                   enzyme_dup, x, vx4[0], vx4[1], vx4[2], vx4[3],
                   enzyme_dupnoneedv, sizeof ty4[0], y, ty4, enzyme_const, M, enzyme_const, N);
  for (int k = 0; k < 4; k++) {
    __enzyme_fwddiff((void *)matvec, enzyme_dup, A, vA4[k], enzyme_dup, x, vx4[k], enzyme_dup, y, ty1,
                     enzyme_const, M, enzyme_const, N);
    for (int i = 0; i < M; i++) checkv("matvec", k, i, ty4[k][i], ty1[i]);
  }
  __enzyme_fwddiff((void *)matvec, enzyme_width, 2, enzyme_const, A, enzyme_dup, x, vx4[2], vx4[3],
                   enzyme_dup, y, ty4[0], ty4[1], enzyme_const, M, enzyme_const, N);
  for (int k = 0; k < 2; k++) {
    __enzyme_fwddiff((void *)matvec, enzyme_const, A, enzyme_dup, x, vx4[2 + k], enzyme_dup, y, ty1,
                     enzyme_const, M, enzyme_const, N);
    for (int i = 0; i < M; i++) checkv("matvec_constA", k, i, ty4[k][i], ty1[i]);
  }
  return report();
}
