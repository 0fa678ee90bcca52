// test flags: -std=c++20
// Static std::vector workspaces in C++20, where clang gives constant-initialized globals a
// literal type (`{ { ptr, ptr, ptr } }`, no names to find the vector by): a static data member
// and a function-local static, grown where short, reused by later gradients (a derivative
// through memory they held before it started faulted). s = sum_i (x_i^2 + 1) u_i with
// u_i = exp(0.2 x_i), so ds/dx_i = (2 x_i + 0.2 (x_i^2 + 1)) u_i; forward against reverse.
#include <cmath>
#include <cstdio>
#include <vector>
static int failed;
static void check(const char *name, double got, double want) {
  bool ok = std::fabs(got - want) <= 1e-9 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

struct Model {
  static std::vector<double> squares;
  __attribute__((noinline)) static double energy(const double *x, int n) {
    static std::vector<double> weights;
    if (weights.size() < (size_t)n) weights.resize(n);
    if (squares.size() < (size_t)n) squares.resize(n);
    for (int i = 0; i < n; ++i) {
      squares[i] = x[i] * x[i] + 1.0;
      weights[i] = std::exp(0.2 * x[i]);
    }
    double s = 0;
    for (int i = 0; i < n; ++i) s += squares[i] * weights[i];
    return s;
  }
};
std::vector<double> Model::squares;

int main() {
  double x[6] = {0.4, -1.1, 2.0, 0.7, -0.3, 1.5};
  std::printf("primal %g\n", Model::energy(x, 3));      // grown before any derivative
  const int sizes[3] = {2, 6, 4};
  for (int n : sizes) {
    double dx[6] = {0}, v[6], vdx = 0;
    __enzyme_autodiff((void *)Model::energy, enzyme_dup, x, dx, enzyme_const, n);
    for (int i = 0; i < n; ++i) {
      char name[32];
      std::snprintf(name, sizeof name, "n%d.dx[%d]", n, i);
      check(name, dx[i], (2 * x[i] + 0.2 * (x[i] * x[i] + 1)) * std::exp(0.2 * x[i]));
      v[i] = std::cos(0.9 + 3.1 * i);
      vdx += v[i] * dx[i];
    }
    check("dot", __enzyme_fwddiff((void *)Model::energy, enzyme_dup, x, v, enzyme_const, n), vdx);
  }
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
