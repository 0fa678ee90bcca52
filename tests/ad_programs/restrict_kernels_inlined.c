/* Loop kernels with `restrict` parameters (in the style of PolyBench's kernels built with
   POLYBENCH_USE_RESTRICT) inlined into the differentiated function: a matrix product
   accumulated into C and a Jacobi sweep from A into B. Inlining leaves LLVM's scoped no-alias
   metadata on their loads and stores: the stores into C (B) cannot change A and B (A), so the
   reverse re-reads them instead of keeping every product's operands. Checked against central
   differences, with a non-restrict caller around. */
#include <math.h>
#include <stdio.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

enum { NI = 7, NJ = 6, NK = 5, NS = 9 };

static void gemm(int ni, int nj, int nk, double alpha, double beta, double C[restrict NI][NJ],
                 const double A[restrict NI][NK], const double B[restrict NK][NJ]) {
  for (int i = 0; i < ni; i++) {
    for (int j = 0; j < nj; j++) C[i][j] *= beta;
    for (int k = 0; k < nk; k++)
      for (int j = 0; j < nj; j++) C[i][j] += alpha * A[i][k] * B[k][j];
  }
}

static void jacobi(int n, int steps, double A[restrict NS][NS], double B[restrict NS][NS]) {
  for (int t = 0; t < steps; t++) {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][j + 1] + B[i + 1][j] + B[i - 1][j]);
  }
}

/* each kernel inlined into a function of its own that weighs every output: C, A, B in one
   array x (distinct parts), the grid in another */
double product(double *x) {
  double (*C)[NJ] = (double (*)[NJ])x, (*A)[NK] = (double (*)[NK])(x + NI * NJ);
  double (*B)[NJ] = (double (*)[NJ])(x + NI * NJ + NI * NK);
  gemm(NI, NJ, NK, 1.5, 0.8, C, (const double (*)[NK])A, (const double (*)[NJ])B);
  double s = 0;
  for (int i = 0; i < NI * NJ; i++) s += sin(1.0 + i) * x[i] * x[i];
  return s;
}

double sweeps(double *g) {
  double (*G)[NS] = (double (*)[NS])g, H[NS][NS];
  memcpy(H, G, sizeof H);
  jacobi(NS, 3, G, H);
  double s = 0;
  for (int i = 0; i < NS * NS; i++) s += cos(0.5 * i) * g[i] * (&H[0][0])[i];
  return s;
}

enum { NX = NI * NJ + NI * NK + NK * NJ, NG = NS * NS };

static void check_gradient(const char *what, double (*f)(double *), int n) {
  double x[NX > NG ? NX : NG], dx[NX > NG ? NX : NG] = {0}, y[NX > NG ? NX : NG];
  for (int i = 0; i < n; i++) x[i] = 0.5 + 0.3 * sin(0.7 * i);
  memcpy(y, x, n * sizeof *x);
  __enzyme_autodiff((void *)f, enzyme_dup, y, dx);
  double t[NX > NG ? NX : NG], dt[NX > NG ? NX : NG], jt = 0;
  for (int i = 0; i < n; i++) { t[i] = sin(2.0 + 3.0 * i); jt += dx[i] * t[i]; }
  memcpy(y, x, n * sizeof *x);
  memcpy(dt, t, n * sizeof *t);
  char name[32];
  snprintf(name, sizeof name, "%s_forward_dot", what);
  check(name, __enzyme_fwddiff((void *)f, enzyme_dup, y, dt), jt);
  for (int k = 0; k < n; k += 3) {
    double h = 1e-6, p[NX > NG ? NX : NG], m[NX > NG ? NX : NG];
    memcpy(p, x, n * sizeof *x); memcpy(m, x, n * sizeof *x);
    p[k] += h; m[k] -= h;
    snprintf(name, sizeof name, "%s_dx[%d]", what, k);
    check(name, dx[k], (f(p) - f(m)) / (2 * h));
  }
}

int main(void) {
  check_gradient("product", product, NX);
  check_gradient("sweeps", sweeps, NG);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
