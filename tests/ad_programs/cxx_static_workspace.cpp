// A function-local static workspace replaced where it is short (`delete[] work; work = new
// double[n];`), reused by later gradients: its shadow was null when the primal or an earlier
// derivative had allocated it (a segfault). s = sum_i exp(0.1 x_i) x_i, so
// ds/dx_i = exp(0.1 x_i) (1 + 0.1 x_i); forward against reverse.
#include <cmath>
#include <cstdio>
static int failed;
static void check(const char *name, double got, double want) {
  bool ok = std::fabs(got - want) <= 1e-9 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

__attribute__((noinline)) double with_workspace(const double *x, int n) {
  static double *work = nullptr;
  static int cap = 0;
  if (cap < n) {
    delete[] work;
    work = new double[n];
    cap = n;
  }
  for (int i = 0; i < n; ++i) work[i] = std::exp(0.1 * x[i]);
  double s = 0;
  for (int i = 0; i < n; ++i) s += work[i] * x[i];
  return s;
}

int main() {
  double x[6] = {0.3, -1.4, 2.2, 0.9, -0.5, 1.7};
  std::printf("primal %g\n", with_workspace(x, 2));      // allocated before any derivative
  const int sizes[4] = {3, 3, 6, 4};                       // grown inside, then reused
  for (int n : sizes) {
    double dx[6] = {0}, v[6], vdx = 0;
    __enzyme_autodiff((void *)with_workspace, enzyme_dup, x, dx, enzyme_const, n);
    for (int i = 0; i < n; ++i) {
      char name[32];
      std::snprintf(name, sizeof name, "n%d.dx[%d]", n, i);
      check(name, dx[i], std::exp(0.1 * x[i]) * (1 + 0.1 * x[i]));
      v[i] = std::sin(1.3 + 7.1 * i);
      vdx += v[i] * dx[i];
    }
    check("dot", __enzyme_fwddiff((void *)with_workspace, enzyme_dup, x, v, enzyme_const, n), vdx);
  }
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
