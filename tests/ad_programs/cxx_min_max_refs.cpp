// test flags: -fno-inline
// Functions returning a reference to one of their arguments (std::min, std::max, std::clamp,
// and a user's template in that style), kept as calls (-fno-inline), given an active value
// and a constant: the returned pointer may be either argument, and the constant's memory had
// no shadow ("pointer joins shadowed and unshadowed memory", refused: found by a new-user
// check); it gets a zeroed one. Reverse mode against central differences, forward mode
// against reverse.
#include <algorithm>
#include <cmath>
#include <cstdio>
static int failed;
static void check(const char *name, double got, double want, double tol) {
  bool ok = std::fabs(got - want) <= tol * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

template <class T> __attribute__((noinline)) const T &smaller(const T &a, const T &b) {
  return b < a ? b : a;
}

double limited(const double *x, int n) {
  double s = 0, lo = -0.5;
  for (int i = 0; i < n; i++) {
    s += smaller(x[i], 0.8) * x[(i + 1) % n];
    s += std::max(x[i] * x[i], 0.3) + std::clamp(std::sin(3 * x[i]), lo, 0.5);
    s += std::min(std::exp(x[i]), 2.0);
  }
  return s;
}

int main() {
  const int n = 6;
  double x[n] = {0.1, 0.95, -0.7, 0.45, 1.3, -0.2}, g[n] = {0}, v[n], vg = 0;
  __enzyme_autodiff((void *)limited, enzyme_dup, x, g, enzyme_const, n);
  for (int i = 0; i < n; i++) {
    double h = 1e-6, xp[n], xm[n];
    for (int j = 0; j < n; j++) xp[j] = xm[j] = x[j];
    xp[i] += h;
    xm[i] -= h;
    char name[16];
    std::snprintf(name, sizeof name, "g[%d]", i);
    check(name, g[i], (limited(xp, n) - limited(xm, n)) / (2 * h), 1e-6);
    v[i] = std::cos(0.9 * i);
    vg += v[i] * g[i];
  }
  check("fwd", __enzyme_fwddiff((void *)limited, enzyme_dup, x, v, enzyme_const, n), vg, 1e-9);
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
