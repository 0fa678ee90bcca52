// An enzyme_const object holding only integers (a std::vector<int>) captured by reference, as
// `this`, in a lambda beside an active pointer: the closure gets a shadow for the active pointer,
// and the constant `this` in it a null one. Building shadows for the pointers read through that
// `this` (the vector's begin and end, or std::vector<int>::operator[]'s result) read through
// null: a segfault at -O0 (a recursive adaptive Simpson quadrature keeps the lambda out of line).
// Nothing there needs a shadow: only integers are read through them.
#include <cmath>
#include <cstdio>
#include <vector>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = std::fabs(got - want) <= 1e-7 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern "C" {
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}

template <typename F>
static double simpson(const F &f, double a, double b, double fa, double fm, double fb, double whole,
                      int depth) {
  double m = 0.5 * (a + b), flm = f(0.5 * (a + m)), frm = f(0.5 * (m + b));
  double left = (m - a) / 6 * (fa + 4 * flm + fm), right = (b - m) / 6 * (fm + 4 * frm + fb);
  if (depth <= 0 || std::fabs(left + right - whole) < 1e-12) return left + right;
  return simpson(f, a, m, fa, flm, fm, left, depth - 1) +
         simpson(f, m, b, fm, frm, fb, right, depth - 1);
}

struct Spectrum {
  std::vector<int> powers;
  // integral over [0, 1] of sum_k p[k] x^powers[k]
  double integral(const double *p) const {
    auto f = [&](double x) {
      double s = 0;
      int k = 0;
      for (int e : powers) s += p[k++] * std::pow(x, e);
      return s;
    };
    return simpson(f, 0.0, 1.0, f(0.0), f(0.5), f(1.0), 0.0, 10);
  }
};

struct Model {
  std::vector<int> idx;
  double total(const double *x) const {
    auto term = [&](int k) { return x[idx[k]] * x[idx[k]] * (k + 1); };
    double acc = 0;
    for (int k = 0; k < (int)idx.size(); ++k) acc += term(k);
    return acc;
  }
};

static double spectrum(const Spectrum *s, const double *p) { return s->integral(p); }
static double model(const Model *m, const double *x) { return m->total(x); }

int main() {
  Spectrum s;
  s.powers = {1, 2, 3};
  double p[3] = {2.0, -1.0, 0.5}, dp[3] = {0, 0, 0};
  __enzyme_autodiff((void *)spectrum, enzyme_const, &s, enzyme_dup, p, dp);
  check("dp[0]", dp[0], 1.0 / 2);          // the integral of x^e is 1/(e+1): linear in p
  check("dp[1]", dp[1], 1.0 / 3);
  check("dp[2]", dp[2], 1.0 / 4);
  double v[3] = {0.3, -0.7, 1.1};
  check("spectrum.fwd.rev", __enzyme_fwddiff((void *)spectrum, enzyme_const, &s, enzyme_dup, p, v),
        v[0] * dp[0] + v[1] * dp[1] + v[2] * dp[2]);

  Model m;
  m.idx = {1, 0, 1};
  double x[2] = {1.5, 2.0}, dx[2] = {0, 0};
  __enzyme_autodiff((void *)model, enzyme_const, &m, enzyme_dup, x, dx);
  // x1^2 * 1 + x0^2 * 2 + x1^2 * 3
  check("dx[0]", dx[0], 4 * x[0]);
  check("dx[1]", dx[1], 8 * x[1]);
  double w[2] = {0.25, -0.5};
  check("model.fwd.rev", __enzyme_fwddiff((void *)model, enzyme_const, &m, enzyme_dup, x, w),
        w[0] * dx[0] + w[1] * dx[1]);
  return failed != 0;
}
