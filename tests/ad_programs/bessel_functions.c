// Bessel functions of the first and second kind, of orders 0 and 1 and of integer order n
// (jn, yn: refused before, "no derivative rule for call to 'jn'"), in double and float:
// d/dx J_n(x) = (J_{n-1}(x) - J_{n+1}(x)) / 2, the same for Y_n, J_0' = -J_1, Y_0' = -Y_1.
// A cylindrical-wave amplitude s = sum_i w_i (J_{k_i}(x_i) + 0.1 Y_{k_i}(x_i)) + J_0(x_0) Y_1(x_1)
// + jnf(3, x_2); forward against reverse.
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

static const int order[5] = {0, 1, 2, 4, -3};
double amplitude(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++)
    s += (1.0 + 0.2 * i) * (jn(order[i], x[i]) + 0.1 * yn(order[i], x[i]));
  return s + j0(x[0]) * y1(x[1]) + jnf(3, (float)x[2]);
}

static double djn(int k, double x) { return 0.5 * (jn(k - 1, x) - jn(k + 1, x)); }
static double dyn(int k, double x) { return 0.5 * (yn(k - 1, x) - yn(k + 1, x)); }

int main(void) {
  double x[5] = {0.7, 1.9, 3.3, 5.1, 2.4}, dx[5] = {0}, v[5], vdx = 0;
  __enzyme_autodiff((void *)amplitude, enzyme_dup, x, dx, enzyme_const, 5);
  for (int i = 0; i < 5; i++) {
    double want = (1.0 + 0.2 * i) * (djn(order[i], x[i]) + 0.1 * dyn(order[i], x[i]));
    if (i == 0) want += -j1(x[0]) * y1(x[1]);
    if (i == 1) want += j0(x[0]) * (y0(x[1]) - y1(x[1]) / x[1]);
    if (i == 2) want += 0.5 * (jnf(2, (float)x[2]) - jnf(4, (float)x[2]));
    char name[16];
    snprintf(name, sizeof name, "dx[%d]", i);
    check(name, dx[i], want, i == 2 ? 1e-6 : 1e-10);
    v[i] = sin(1.0 + 2.3 * i);
    vdx += v[i] * dx[i];
  }
  // (the float term: its tangent and adjoint are rounded to float)
  check("dot", __enzyme_fwddiff((void *)amplitude, enzyme_dup, x, v, enzyme_const, 5), vdx, 1e-6);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
