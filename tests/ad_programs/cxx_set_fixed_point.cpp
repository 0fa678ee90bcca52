// __enzyme_set_fixed_point in C++: a function template solving x = tanh(W x + c) (a 3-unit
// equilibrium, a contraction) with the state in a std::array, marked from inside the loop. The
// gradient of a readout with respect to c is checked against the implicit-function theorem
// solved here directly, central differences and forward mode (dot-product test).
#include <enzyme/fixed_point.h>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>

extern "C" double __enzyme_autodiff(void *, ...);
extern "C" double __enzyme_fwddiff(void *, ...);
extern int enzyme_dup, enzyme_const;

static int failed;
static void check(const char *name, double got, double want, double rtol) {
  bool ok = std::fabs(got - want) <= rtol * (1e-12 + std::fabs(want));
  std::printf("CHECK %s %.15g %.15g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}

static const double W[3][3] = {{0.2, -0.1, 0.3}, {0.1, 0.25, -0.2}, {-0.3, 0.1, 0.15}};

template <int N> __attribute__((noinline)) double equilibrium(const double *c) {
  std::array<double, N> x{};
  double delta = 1, *state = x.data();     // the marker's arguments: computed before the loop
  while (delta > 1e-15) {
    __enzyme_set_fixed_point(1e-28, (int64_t)-1, nullptr, state, (int64_t)sizeof(x));
    std::array<double, N> nx;
    delta = 0;
    for (int i = 0; i < N; i++) {
      double s = c[i];
      for (int j = 0; j < N; j++)
        s += W[i][j] * x[j];
      nx[i] = std::tanh(s);
      delta += std::fabs(nx[i] - x[i]);
    }
    for (int i = 0; i < N; i++)
      x[i] = nx[i];
  }
  return x[0] + 2 * x[1] - x[2];
}

int main() {
  double c[3] = {0.3, -0.2, 0.5}, dc[3] = {0, 0, 0};
  __enzyme_autodiff((void *)equilibrium<3>, enzyme_dup, c, dc);
  // x* = tanh(W x* + c): dx*/dc = (I - D W)^{-1} D, D = diag(1 - x*^2); readout r = (1, 2, -1)
  double x[3] = {0, 0, 0};
  for (int it = 0; it < 500; it++) {
    double nx[3];
    for (int i = 0; i < 3; i++) {
      double s = c[i];
      for (int j = 0; j < 3; j++)
        s += W[i][j] * x[j];
      nx[i] = std::tanh(s);
    }
    std::memcpy(x, nx, sizeof x);
  }
  // gradient = D (I - D W)^{-T} r: solve (I - D W)^T y = r, then g = D y
  double D[3], M[3][4], r[3] = {1, 2, -1};
  for (int i = 0; i < 3; i++)
    D[i] = 1 - x[i] * x[i];
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++)
      M[i][j] = (i == j) - D[j] * W[j][i];
    M[i][3] = r[i];
  }
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 3; k++)
      if (k != i) {
        double f = M[k][i] / M[i][i];
        for (int j = 0; j < 4; j++)
          M[k][j] -= f * M[i][j];
      }
  char name[64];
  double h = 1e-6;
  for (int i = 0; i < 3; i++) {
    double want = D[i] * M[i][3] / M[i][i];
    std::snprintf(name, sizeof name, "reverse_%d", i);
    check(name, dc[i], want, 1e-10);
    double cp[3], cm[3];
    std::memcpy(cp, c, sizeof c);
    std::memcpy(cm, c, sizeof c);
    cp[i] += h;
    cm[i] -= h;
    std::snprintf(name, sizeof name, "fd_%d", i);
    check(name, dc[i], (equilibrium<3>(cp) - equilibrium<3>(cm)) / (2 * h), 1e-6);
  }
  double v[3] = {0.4, -0.3, 0.2};
  check("forward_dot", __enzyme_fwddiff((void *)equilibrium<3>, enzyme_dup, c, v),
        v[0] * dc[0] + v[1] * dc[1] + v[2] * dc[2], 1e-10);
  if (failed)
    std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
