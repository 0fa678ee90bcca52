// C++ function-local statics initialized at run time (guarded by __cxa_guard_acquire): a table
// of constants in a std::vector, built by the primal's first call before the derivative runs
// (the derivative read the table's data through the static's shadow, which had no blocks: a
// segfault), the same in a function whose first call is the derivative itself, and a static
// that the function writes after its initialization (a cache of the last input: not a
// constant, its stores reach the result). A static vector written after its initialization
// with an active value is refused ("an active value is stored to memory that has no shadow").
#include <cmath>
#include <cstdio>
#include <vector>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = std::fabs(got - want) <= 1e-9 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern "C" {
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}

static std::vector<double> weights(int n) {
  std::vector<double> w;
  for (int i = 0; i < n; i++) w.push_back(0.25 * (i + 1));
  return w;
}

// sum_i w_i sin(x_i), w from a static table built on the first call
double table_first_in_primal(const double *x, int n) {
  static const std::vector<double> w = {0.25, 0.5, 0.75, 1.0};
  double e = 0;
  for (int i = 0; i < n; i++) e += w[i % 4] * std::sin(x[i]);
  return e;
}

// the same with its own static, built by a function, first called through the derivative
double table_first_in_derivative(const double *x, int n) {
  static std::vector<double> w = weights(4);
  double e = 0;
  for (int i = 0; i < n; i++) e += w[i % 4] * x[i] * x[i];
  return e;
}

// a static the function writes every call: x[0] of this call stored, then read back
double with_cache(const double *x, int n) {
  static double last = std::sqrt((double)n);
  last = x[0];
  double e = 0;
  for (int i = 0; i < n; i++) e += last * x[i];
  return e;
}

int main() {
  const int n = 6;
  double x[n] = {0.3, -1.2, 0.8, 2.0, -0.5, 1.1}, v[n] = {0.5, 1.0, -0.3, 0.2, 0.9, -0.7};
  char name[32];
  std::printf("primal %g\n", table_first_in_primal(x, n));
  double dx[n] = {0};
  __enzyme_autodiff((void *)table_first_in_primal, enzyme_dup, x, dx, enzyme_const, n);
  double vdx = 0;
  for (int i = 0; i < n; i++) {
    std::snprintf(name, sizeof name, "primal_first_dx[%d]", i);
    check(name, dx[i], 0.25 * (i % 4 + 1) * std::cos(x[i]));
    vdx += v[i] * dx[i];
  }
  check("primal_first_dot", __enzyme_fwddiff((void *)table_first_in_primal, enzyme_dup, x, v,
                                             enzyme_const, n), vdx);

  double dy[n] = {0};
  __enzyme_autodiff((void *)table_first_in_derivative, enzyme_dup, x, dy, enzyme_const, n);
  double vdy = 0;
  for (int i = 0; i < n; i++) {
    std::snprintf(name, sizeof name, "derivative_first_dx[%d]", i);
    check(name, dy[i], 0.25 * (i % 4 + 1) * 2 * x[i]);
    vdy += v[i] * dy[i];
  }
  check("derivative_first_dot", __enzyme_fwddiff((void *)table_first_in_derivative, enzyme_dup,
                                                 x, v, enzyme_const, n), vdy);

  std::printf("cache primal %g\n", with_cache(x, n));
  double dz[n] = {0}, sum = 0;
  for (int i = 0; i < n; i++) sum += x[i];
  __enzyme_autodiff((void *)with_cache, enzyme_dup, x, dz, enzyme_const, n);
  double vdz = 0;
  for (int i = 0; i < n; i++) {
    std::snprintf(name, sizeof name, "cache_dx[%d]", i);
    check(name, dz[i], x[0] + (i == 0 ? sum : 0.0));     // d/dx_i of x0 * sum_j x_j
    vdz += v[i] * dz[i];
  }
  check("cache_dot", __enzyme_fwddiff((void *)with_cache, enzyme_dup, x, v, enzyme_const, n), vdz);
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
