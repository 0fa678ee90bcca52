/* A global pointer set once to a heap block of constant size: LLVM's globalopt makes the block
   a byte-array global (`[32 x i8]`), which one function fills with doubles and another reads.
   Its type says nothing about floats; its accesses do, so it carries active data between the
   two like any float global (before 2026-11-30 the reading function took it as constant: a
   gradient missing that path, with no error). The unoptimized pipeline keeps the pointer and
   refuses with "an active value is stored to memory that has no shadow"; so does every level
   when the program frees the block (globalopt then keeps the pointer). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
static int failed;
static void check(const char *name, int i, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s[%d] %.12g %.12g%s\n", name, i, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

enum { N = 4 };
static double *work;

__attribute__((noinline)) static void fill(const double *x, int n) {
  for (int i = 0; i < n; i++) work[i] = x[i] * x[(i + 1) % n];
}
__attribute__((noinline)) static double use(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += sin(work[i]) * x[i];
  return s;
}
double f(const double *x, int n) {
  fill(x, n);
  return use(x, n);
}

int main(void) {
  work = malloc(N * sizeof(double));
  double x[N] = {0.3, 0.7, 1.1, 0.5}, dx[N] = {0}, v[N] = {0.2, -0.4, 0.9, 0.1};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, N);
  double jv = 0;
  for (int k = 0; k < N; k++) {
    double want = 0;          /* d/dx_k sum_i sin(x_i x_{i+1}) x_i */
    for (int i = 0; i < N; i++) {
      int j = (i + 1) % N;
      double w = x[i] * x[j];
      want += cos(w) * ((i == k) * x[j] + (j == k) * x[i]) * x[i] + (i == k) * sin(w);
    }
    check("grad", k, dx[k], want);
    jv += v[k] * dx[k];
  }
  check("dot", 0, __enzyme_fwddiff((void *)f, enzyme_dup, x, v, enzyme_const, N), jv);
  if (failed) printf("FAILED: %d check(s)\n", failed);

  return failed != 0;
}
