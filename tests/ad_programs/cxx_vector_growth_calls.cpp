// test flags: -fno-inline
// std::vector<double> and std::vector<float> grown by push_back with the standard library kept
// as calls (-fno-inline, as in profiling builds): the elements move in std::__relocate_a_1,
// one memmove whose type only the function's C++ signature gives (`double*`: refused, "cannot
// deduce the type of the memory being copied"; found by a new-user check). Reverse mode
// against the analytic gradient (the float terms' rounding defeats central differences),
// forward mode against reverse.
#include <cmath>
#include <cstdio>
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

double series(const double *x, int n) {
  std::vector<double> terms;
  std::vector<float> coarse;
  for (int i = 0; i < n; i++) {
    terms.push_back(x[i] * x[i] + std::sin(x[i]));
    coarse.push_back((float)(0.5 * x[i]));
  }
  double s = 0;
  for (size_t i = 0; i < terms.size(); i++) s += terms[i] * (1.0 + 0.1 * i) + coarse[i];
  return s;
}

int main() {
  const int n = 7;
  double x[n], g[n] = {0}, v[n], vg = 0;
  for (int i = 0; i < n; i++) x[i] = 0.3 + 0.2 * i;
  __enzyme_autodiff((void *)series, enzyme_dup, x, g, enzyme_const, n);
  for (int i = 0; i < n; i++) {
    char name[16];
    std::snprintf(name, sizeof name, "g[%d]", i);
    check(name, g[i], (2 * x[i] + std::cos(x[i])) * (1.0 + 0.1 * i) + 0.5, 1e-9);
    v[i] = std::cos(0.5 * i);
    vg += v[i] * g[i];
  }
  check("fwd", __enzyme_fwddiff((void *)series, enzyme_dup, x, v, enzyme_const, n), vg, 1e-6);
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
