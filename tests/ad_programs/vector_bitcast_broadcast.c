// A double viewed as a one-lane vector (`bitcast double to <1 x double>`: a cast of a scalar to
// a vector of its size, as LLVM's -O3 makes of a broadcast of one matrix entry in Eigen's
// fixed-size products) and broadcast: activity took the view for a constant and dropped its
// derivative (half of an Eigen element stiffness gradient, silently).
// f = t (x2 + x3) with t = x0 x1: df/dx = (x1 (x2 + x3), x0 (x2 + x3), t, t).
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-12 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern int enzyme_dup;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
typedef double v1 __attribute__((vector_size(8)));
typedef double v2 __attribute__((vector_size(16)));

double f(const double *x) {
  double t = x[0] * x[1];
  v1 a = __builtin_bit_cast(v1, t);
  v2 b = __builtin_shufflevector(a, a, 0, 0);
  v2 c = b * (v2){x[2], x[3]};
  return c[0] + c[1];
}

int main(void) {
  double x[4] = {0.3, -1.2, 2.5, 0.7}, dx[4] = {0}, v[4] = {0.5, -0.25, 1.5, 2.0}, vdx = 0;
  double want[4] = {x[1] * (x[2] + x[3]), x[0] * (x[2] + x[3]), x[0] * x[1], x[0] * x[1]};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx);
  for (int i = 0; i < 4; i++) {
    char name[16];
    snprintf(name, sizeof name, "dx[%d]", i);
    check(name, dx[i], want[i]);
    vdx += v[i] * dx[i];
  }
  check("dot", __enzyme_fwddiff((void *)f, enzyme_dup, x, v), vdx);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
