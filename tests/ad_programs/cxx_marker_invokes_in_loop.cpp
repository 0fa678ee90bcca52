// Marker calls made while a std::vector is alive (a seed vector per loop iteration) are
// invokes whose unwind edges share one cleanup block. Rewritten as calls, they leave that block
// unreachable, and a phi of it (the buffer to free) became `freeze poison` in front of the
// landingpad: invalid IR at -O2 (an internal error). f = p0^2 p1: df/dp = (2 p0 p1, p0^2).
#include <enzyme/enzyme>
#include <cmath>
#include <cstdio>
#include <vector>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = std::fabs(got - want) <= 1e-12 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern "C" double __enzyme_fwddiff(void *, ...);
extern "C" void __enzyme_autodiff(void *, ...);

double f(const double *p) { return p[0] * p[0] * p[1]; }

int main() {
  std::vector<double> p = {1.5, 2.0};
  const double want[2] = {2 * 1.5 * 2.0, 1.5 * 1.5};
  char name[32];
  for (int i = 0; i < 2; i++) {
    std::vector<double> e(2, 0.0);
    e[i] = 1;
    auto r = enzyme::autodiff<enzyme::Forward>(f, enzyme::Duplicated<const double *>(p.data(), e.data()));
    std::snprintf(name, sizeof name, "header_forward_%d", i);
    check(name, enzyme::get<0>(r), want[i]);
  }
  std::vector<double> g(2, 0.0), gc(2, 0.0);
  enzyme::autodiff<enzyme::Reverse>(f, enzyme::Duplicated<const double *>(p.data(), g.data()));
  for (int i = 0; i < 2; i++) {
    std::vector<double> seed(2, 0.0);   // (a vector alive across the marker: an invoke)
    __enzyme_autodiff((void *)f, p.data(), gc.data());
    std::snprintf(name, sizeof name, "c_reverse_%d", i);
    check(name, gc[i], (i + 1) * want[i]);
  }
  for (int i = 0; i < 2; i++) {
    std::vector<double> e(2, 0.0);
    e[i] = 1;
    std::snprintf(name, sizeof name, "c_forward_%d", i);
    check(name, __enzyme_fwddiff((void *)f, p.data(), e.data()), want[i]);
    std::snprintf(name, sizeof name, "reverse_%d", i);
    check(name, g[i], want[i]);
  }
  return failed;
}
