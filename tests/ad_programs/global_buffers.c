/* Heap buffers reached through mutable global pointers (a global double* and a global struct
   holding a pointer), allocated and filled in one function, used in others: the pointer globals
   get shadow globals holding the shadow buffers. Reverse and forward mode against central
   finite differences. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

#define N 6
double *buf;
struct { double *data; int n; } grid;

__attribute__((noinline)) void setup(double x) {
  buf = malloc(N * sizeof(double));
  for (int i = 0; i < N; i++) buf[i] = x * i;
  grid.data = malloc(N * sizeof(double));
  grid.n = N;
}
__attribute__((noinline)) void fill(void) {
  for (int i = 0; i < grid.n; i++) grid.data[i] = sin(buf[i]);
}
__attribute__((noinline)) double sum(void) {
  double s = 0;
  for (int i = 0; i < grid.n; i++) s += grid.data[i] * buf[i];
  return s;
}
double run(double x) {
  setup(x);
  fill();
  double s = sum();
  free(buf);
  free(grid.data);
  return s;
}

int main(void) {
  const double x = 0.4, h = 1e-6;
  double fd = (run(x + h) - run(x - h)) / (2 * h);
  check("grad", __enzyme_autodiff((void *)run, x), fd);
  check("grad_again", __enzyme_autodiff((void *)run, x), fd);
  check("forward", __enzyme_fwddiff((void *)run, x, 1.0), fd);
  return failed != 0;
}
