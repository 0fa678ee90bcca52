// Error paths that never return, spanning several blocks: a throw whose message is built from
// the active value (std::to_string, string concatenation: invokes with cleanups before the
// throw), the same through a [[noreturn]] helper, and a std::string temporary on the taken
// path that logs an active value (std::to_string formats it through a variadic template).
// Once refused: "cannot differentiate the variadic function ... __to_xstring". Reverse and
// forward mode against the analytic derivatives.
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

static int failed;
static void check(const char *name, double got, double want) {
  bool ok = std::fabs(got - want) <= 1e-10 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

double checked_root(double v) {
  if (v < 0) throw std::domain_error("negative argument " + std::to_string(v) + " to root");
  return std::sqrt(v) * v;                       // v^1.5
}

[[noreturn]] __attribute__((noinline)) static void fail(const char *what, double v) {
  throw std::range_error(std::string(what) + ": " + std::to_string(v));
}

double damped(double v) {
  double s = 0;
  for (int i = 1; i <= 4; i++) {
    double t = std::exp(-v * i) * i;
    if (!(t < 1e6)) fail("overflow", t);
    s += t;
  }
  return s;                                      // sum i e^{-v i}
}

double logged(double v) {
  std::string note = "v = " + std::to_string(v * v);
  if (note.size() > 200) std::puts(note.c_str());
  return std::sin(v) * v;
}

int main() {
  double v = 1.7;
  check("rev_checked_root", __enzyme_autodiff((void *)checked_root, v), 1.5 * std::sqrt(v));
  check("fwd_checked_root", __enzyme_fwddiff((void *)checked_root, v, 1.0), 1.5 * std::sqrt(v));
  double want = 0;
  for (int i = 1; i <= 4; i++) want -= i * i * std::exp(-v * i);
  check("rev_damped", __enzyme_autodiff((void *)damped, v), want);
  check("fwd_damped", __enzyme_fwddiff((void *)damped, v, 1.0), want);
  check("rev_logged", __enzyme_autodiff((void *)logged, v), std::cos(v) * v + std::sin(v));
  check("fwd_logged", __enzyme_fwddiff((void *)logged, v, 1.0), std::cos(v) * v + std::sin(v));
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
