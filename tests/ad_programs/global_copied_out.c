// A global array written in one function and copied out in another with memcpy: the copy's
// source was not counted as a read of the global, so it seemed used by one function only and
// got no shadow shared between the two (at -O0 the gradient was zero).
// J = sum_i (x_i^2)^2: dJ/dx_i = 4 x_i^3.
#include <math.h>
#include <stdio.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-12 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
#define N 4
static double W[N];

__attribute__((noinline)) static void fill(const double *x) {
  for (int i = 0; i < N; i++) W[i] = x[i] * x[i];
}

double f(const double *x) {
  double U[N];
  fill(x);
  memcpy(U, W, sizeof U);
  double J = 0;
  for (int i = 0; i < N; i++) J += U[i] * U[i];
  return J;
}

int main(void) {
  double x[N] = {1, 2, 3, 0.5}, dx[N] = {0};
  __enzyme_autodiff((void *)f, x, dx);
  char name[32];
  for (int i = 0; i < N; i++) {
    double t[N] = {0};
    t[i] = 1;
    snprintf(name, sizeof name, "reverse_%d", i);
    check(name, dx[i], 4 * x[i] * x[i] * x[i]);
    snprintf(name, sizeof name, "forward_%d", i);
    check(name, __enzyme_fwddiff((void *)f, x, t), 4 * x[i] * x[i] * x[i]);
  }
  return failed;
}
