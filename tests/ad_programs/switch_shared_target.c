/* A switch two of whose case values jump straight to the same block (one predecessor, two
   edges: the block's phis need an entry per edge), in a loop of a function that is not
   inlined, so the reverse sweep needs the predecessor it came from (as in LULESH's boundary
   conditions). Was an internal error ("PHINode should have one entry for each predecessor").
   Reverse mode against central differences, forward mode against reverse. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, int i, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s[%d] %.12g %.12g%s\n", name, i, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
enum { N = 8, M = 6 };

__attribute__((noinline)) void relax(double *x, const int *bc, int n) {
  for (int i = 0; i < n; ++i) {
    double dm;
    switch (bc[i] & 7) {
    case 0: dm = x[i + 1]; break;
    case 1: dm = x[i] + 0.5; break;
    case 2: case 4: dm = 0.25; break;
    default: dm = 1.0; break;
    }
    x[i] = x[i] * dm;
  }
}
double f(double *x, const int *bc, int n) {
  relax(x, bc, n);
  double s = 0;
  for (int i = 0; i < n + 2; ++i) s += x[i] * x[i];
  return s;
}

int main(void) {
  const int bc[M] = {0, 1, 2, 4, 0, 3};
  double x0[N], x[N], dx[N] = {0}, tx[N];
  for (int i = 0; i < N; i++) { x0[i] = 0.1 * (i + 1); tx[i] = sin(1.0 + i); }
  for (int i = 0; i < N; i++) x[i] = x0[i];
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, bc, enzyme_const, M);
  double dot = 0;
  for (int i = 0; i < N; i++) {
    double h = 1e-6, xp[N], xm[N];
    for (int k = 0; k < N; k++) xp[k] = xm[k] = x0[k];
    xp[i] += h; xm[i] -= h;
    check("dx", i, dx[i], (f(xp, bc, M) - f(xm, bc, M)) / (2 * h));
    dot += dx[i] * tx[i];
  }
  for (int i = 0; i < N; i++) x[i] = x0[i];
  double jt = __enzyme_fwddiff((void *)f, enzyme_dup, x, tx, enzyme_const, bc, enzyme_const, M);
  check("forward.dot", 0, jt, dot);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
