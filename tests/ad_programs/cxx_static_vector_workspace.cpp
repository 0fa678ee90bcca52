// File-scope std::vector workspaces grown where short (`work.resize(n)`), one on its own and
// two inside a static struct beside a double, reused by later gradients: their shadows were
// null when the primal or an earlier derivative had grown them (a segfault). Each derivative's
// entry gives a shadow vector of the primal's capacity and size.
// s = sum_i w_i w_{i+1 mod n} + c sum_i y_i^2 with w_i = sin(x_i) x_i, y_i = x_i^2, c = 0.5
// (a static the function sets), so ds/dx_i = w_i' (w_{i-1} + w_{i+1}) + 4 c x_i^3 with
// w_i' = cos(x_i) x_i + sin(x_i) (n >= 3); forward against reverse.
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

static std::vector<double> work;
struct Scratch {
  double c;
  std::vector<double> y;
  std::vector<float> unused;
};
static Scratch scratch;

__attribute__((noinline)) double energy(const double *x, int n) {
  if (work.size() < (size_t)n) work.resize(n);
  if (scratch.y.size() < (size_t)n) scratch.y.resize(n);
  scratch.c = 0.5;
  for (int i = 0; i < n; ++i) {
    work[i] = std::sin(x[i]) * x[i];
    scratch.y[i] = x[i] * x[i];
  }
  double s = 0;
  for (int i = 0; i < n; ++i) s += work[i] * work[(i + 1) % n] + scratch.c * scratch.y[i] * scratch.y[i];
  return s;
}

int main() {
  double x[7] = {0.3, -1.4, 2.2, 0.9, -0.5, 1.7, 0.6};
  std::printf("primal %g\n", energy(x, 4));         // grown before any derivative
  const int sizes[4] = {3, 4, 7, 5};                 // grown inside, then reused
  for (int n : sizes) {
    double dx[7] = {0}, v[7], vdx = 0;
    __enzyme_autodiff((void *)energy, enzyme_dup, x, dx, enzyme_const, n);
    for (int i = 0; i < n; ++i) {
      char name[32];
      std::snprintf(name, sizeof name, "n%d.dx[%d]", n, i);
      double w = [&](int k) { return std::sin(x[k]) * x[k]; }((i + n - 1) % n) +
                 std::sin(x[(i + 1) % n]) * x[(i + 1) % n];
      check(name, dx[i], (std::cos(x[i]) * x[i] + std::sin(x[i])) * w + 2 * x[i] * x[i] * x[i]);
      v[i] = std::sin(1.3 + 7.1 * i);
      vdx += v[i] * dx[i];
    }
    check("dot", __enzyme_fwddiff((void *)energy, enzyme_dup, x, v, enzyme_const, n), vdx);
  }
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
