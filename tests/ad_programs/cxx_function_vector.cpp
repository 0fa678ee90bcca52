// A spectral model built as a std::vector<std::function<double(double)>>, grown by push_back
// without reserve(): each growth moves the std::function objects into a new block, and the
// lambdas' captured parameters live in std::function's type-erased storage, whose IR type (two
// i64s) says nothing about them. Three kinds of terms: one double captured by value (kept in
// the std::function itself), a double by value and an active local by reference, and three
// doubles by value (32 bytes: kept on the heap, the std::function holding a pointer). Reverse
// mode against central differences, forward mode against reverse.
#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>
static int failed;
static void check(const char *name, double got, double want, double tol) {
  bool ok = std::fabs(got - want) <= tol * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

// theta: 2 amplitudes, a shared phase, then (amplitude, frequency, damping) per damped mode
__attribute__((noinline)) double misfit(const double *theta, int modes) {
  double phase = 0.5 * theta[2];
  std::vector<std::function<double(double)>> terms;
  terms.push_back([a = theta[0]](double t) { return a * std::sin(t); });
  terms.push_back([a = theta[1], &phase](double t) { return a * std::cos(2 * t + phase); });
  for (int k = 0; k < modes; ++k) {
    double amp = theta[3 + 3 * k], freq = theta[4 + 3 * k], damp = theta[5 + 3 * k];
    terms.push_back([amp, freq, damp](double t) {
      return amp * std::exp(-damp * t) * std::sin(freq * t);
    });
  }
  double s = 0;
  for (int i = 0; i < 16; ++i) {
    double t = 0.1 * i, model = 0;
    for (auto &f : terms) model += f(t);
    double r = model - std::cos(1.3 * t);
    s += r * r;
  }
  return s;
}

int main() {
  const int modes = 3, n = 3 + 3 * modes;
  double theta[n] = {0.8, -0.4, 0.3, 1.1, 2.0, 0.5, -0.6, 3.1, 0.9, 0.25, 1.4, 0.2};
  double g[n] = {0};
  __enzyme_autodiff((void *)misfit, enzyme_dup, theta, g, enzyme_const, modes);
  double v[n], vg = 0;
  for (int i = 0; i < n; ++i) {
    double h = 1e-6, tp[n], tm[n];
    for (int j = 0; j < n; ++j) tp[j] = tm[j] = theta[j];
    tp[i] += h;
    tm[i] -= h;
    char name[32];
    std::snprintf(name, sizeof name, "g[%d]", i);
    check(name, g[i], (misfit(tp, modes) - misfit(tm, modes)) / (2 * h), 1e-6);
    v[i] = std::sin(1.7 + 0.9 * i);
    vg += v[i] * g[i];
  }
  check("fwd", __enzyme_fwddiff((void *)misfit, enzyme_dup, theta, v, enzyme_const, modes), vg,
        1e-9);
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
