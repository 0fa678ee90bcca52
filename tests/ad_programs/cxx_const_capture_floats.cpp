// A constant model object (enzyme_const) whose member functions hand a `[&]` lambda to a
// quadrature: the closure holds `this` (no shadow) beside a reference to the active parameters
// (with one), and the lambda reads doubles through `this` (a member and a std::vector<double>).
// The quadratures stay out of line at every level (a recursive adaptive Simpson; a Gauss rule
// called through a second function, both noinline; nested for a double integral), so the
// closure is a record in memory whose `this` field has no shadow: its readers must take what
// they read through it as constant (refused before: "a pointer to double data without a
// shadow ... is stored into memory that has one"). std::accumulate takes its lambda by value:
// under -fno-inline a copy of the closure is what the out-of-line accumulate reads (a segfault
// before).
#include <cmath>
#include <cstdio>
#include <numeric>
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
  if (depth <= 0 || std::fabs(left + right - whole) < 1e-13) return left + right;
  return simpson(f, a, m, fa, flm, fm, left, depth - 1) +
         simpson(f, m, b, fm, frm, fb, right, depth - 1);
}

// 3-point Gauss-Legendre on [a, b]: exact for polynomials of degree 5
template <typename F>
__attribute__((noinline)) static double gauss3(const F &f, double a, double b) {
  const double r = std::sqrt(0.6), h = 0.5 * (b - a), c = 0.5 * (a + b);
  return h * (5.0 / 9 * f(c - h * r) + 8.0 / 9 * f(c) + 5.0 / 9 * f(c + h * r));
}
template <typename F>
__attribute__((noinline)) static double panels(const F &f, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += gauss3(f, double(i) / n, double(i + 1) / n);
  return s;
}

struct Model {
  std::vector<double> coef;   // read through the captured `this`
  double scale;
  // integral over [0, 1] of scale * sum_k p[k] coef[k] x^k  (k <= 3: Simpson is exact)
  double moments(const double *p) const {
    auto f = [&](double x) {
      double s = 0, xk = 1;
      for (size_t k = 0; k < coef.size(); ++k) { s += p[k] * coef[k] * xk; xk *= x; }
      return scale * s;
    };
    return simpson(f, 0.0, 1.0, f(0.0), f(0.5), f(1.0), 0.0, 8);
  }
  // integral over [0, 1] of scale * exp(-p[0] x) * (1 + p[1] x^2 coef[0])
  double decay(const double *p) const {
    auto f = [&](double x) { return scale * std::exp(-p[0] * x) * (1 + p[1] * x * x * coef[0]); };
    return panels(f, 16);
  }
  // integral over the unit square of scale * (p0 x + p1 y^2 coef[0] + p0 p1 x y coef[1]): the
  // inner lambda's `this` is read from the outer closure's field
  double square(const double *p) const {
    return gauss3([&](double x) {
      return gauss3([&](double y) {
        return scale * (p[0] * x + p[1] * y * y * coef[0] + p[0] * p[1] * x * y * coef[1]);
      }, 0.0, 1.0);
    }, 0.0, 1.0);
  }
  // sum over idx of coef[k] p[k]^2
  double weighted(const double *p) const {
    return std::accumulate(idx.begin(), idx.end(), 0.0,
                           [&](double acc, int k) { return acc + coef[k] * p[k] * p[k]; });
  }
  std::vector<int> idx;
};

static double moments(const Model *m, const double *p) { return m->moments(p); }
static double decay(const Model *m, const double *p) { return m->decay(p); }
static double weighted(const Model *m, const double *p) { return m->weighted(p); }
static double square(const Model *m, const double *p) { return m->square(p); }

int main() {
  Model m;
  m.coef = {1.5, -2.0, 0.75, 0.5};
  m.scale = 1.25;
  double p[4] = {0.4, 1.1, -0.3, 0.8}, dp[4] = {0, 0, 0, 0};
  __enzyme_autodiff((void *)moments, enzyme_const, &m, enzyme_dup, p, dp);
  for (int k = 0; k < 4; ++k) {
    char name[16];
    std::snprintf(name, sizeof name, "moments.dp[%d]", k);
    check(name, dp[k], m.scale * m.coef[k] / (k + 1));
  }
  double v[4] = {0.3, -0.7, 1.1, 0.2};
  check("moments.fwd.rev", __enzyme_fwddiff((void *)moments, enzyme_const, &m, enzyme_dup, p, v),
        v[0] * dp[0] + v[1] * dp[1] + v[2] * dp[2] + v[3] * dp[3]);

  double q[2] = {0.9, 0.6}, dq[2] = {0, 0};
  __enzyme_autodiff((void *)decay, enzyme_const, &m, enzyme_dup, q, dq);
  for (int k = 0; k < 2; ++k) {
    double h = 1e-6, keep = q[k];
    q[k] = keep + h;
    double up = decay(&m, q);
    q[k] = keep - h;
    double down = decay(&m, q);
    q[k] = keep;
    char name[16];
    std::snprintf(name, sizeof name, "decay.dq[%d]", k);
    check(name, dq[k], (up - down) / (2 * h));
  }
  double w[2] = {0.25, -0.5};
  check("decay.fwd.rev", __enzyme_fwddiff((void *)decay, enzyme_const, &m, enzyme_dup, q, w),
        w[0] * dq[0] + w[1] * dq[1]);

  double t[2] = {0.7, -0.4}, dt[2] = {0, 0};
  __enzyme_autodiff((void *)square, enzyme_const, &m, enzyme_dup, t, dt);
  check("square.dt[0]", dt[0], m.scale * (0.5 + t[1] * m.coef[1] / 4));
  check("square.dt[1]", dt[1], m.scale * (m.coef[0] / 3 + t[0] * m.coef[1] / 4));
  check("square.fwd.rev", __enzyme_fwddiff((void *)square, enzyme_const, &m, enzyme_dup, t, w),
        w[0] * dt[0] + w[1] * dt[1]);

  m.idx = {2, 0, 2, 3};
  double r[4] = {0.5, 9.0, -1.5, 2.0}, dr[4] = {0, 0, 0, 0};
  __enzyme_autodiff((void *)weighted, enzyme_const, &m, enzyme_dup, r, dr);
  check("weighted.dr[0]", dr[0], 2 * m.coef[0] * r[0]);
  check("weighted.dr[1]", dr[1], 0.0);
  check("weighted.dr[2]", dr[2], 2 * 2 * m.coef[2] * r[2]);
  check("weighted.dr[3]", dr[3], 2 * m.coef[3] * r[3]);
  check("weighted.fwd.rev", __enzyme_fwddiff((void *)weighted, enzyme_const, &m, enzyme_dup, r, v),
        v[0] * dr[0] + v[1] * dr[1] + v[2] * dr[2] + v[3] * dr[3]);
  return failed != 0;
}
