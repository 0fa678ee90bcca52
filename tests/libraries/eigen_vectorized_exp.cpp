// Eigen's vectorized coefficient-wise exp (a softmax's log-sum-exp, a logistic loss):
// with SSE4.1 or AVX Eigen takes the exponent with a rounding instruction
// (`llvm.x86.sse41.round.pd`, `avx.round.pd.256`) and converts it with CVTPD2DQ, which AD had no
// rule for (refused); both are now plain IR (llvm.floor/roundeven, fptosi). SSE2 alone computes
// that floor by float arithmetic behind an empty assembly barrier (refused before): the barrier
// becomes the rounding it hides. The float exp converts with CVTTPS2DQ (refused before). (Eigen's
// vectorized log reads the exponent's bits, refused by name.)
// lse(z) = log sum exp z: d/dz_i = softmax_i;  nll(w) = sum log(1 + exp(-y_i w_i)) (scalar log);
// fl(v) = sum exp(v) + floor(3.7 v) + round(v) + sqrt|v| v in float: d/dv_i = exp(v_i) +
// 1.5 sqrt|v_i| (Eigen's float sqrt refines x86's approximate rsqrt: refused before).
// ss(x) = sum (i + 1) sqrt|x_i| x_i (SSE2's abs clears the sign bits of integers loaded from
// the array, whose plain float view x is used beside them: refused before):
// d/dx_i = (i + 1) 1.5 sqrt|x_i|.
#include <Eigen/Dense>
#include <cmath>
#include <cstdio>
#include <enzyme/enzyme>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = std::fabs(got - want) <= 1e-10 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}

extern "C" void __enzyme_autodiff(void *, ...);
double lse(const Eigen::VectorXd &z) { return std::log(z.array().exp().sum()); }
double ss(const double *xin, int n) {
  Eigen::Map<const Eigen::ArrayXd> x(xin, n);
  Eigen::ArrayXd r = x.abs().sqrt() * x;
  return (r * Eigen::ArrayXd::LinSpaced(n, 1.0, n)).sum();
}
float fl(const float *v, int n) {
  Eigen::Map<const Eigen::ArrayXf> a(v, n);
  return a.exp().sum() + (a * 3.7f).floor().sum() + a.round().sum() + (a.abs().sqrt() * a).sum();
}
double nll(const Eigen::VectorXd &w) {
  Eigen::ArrayXd y = Eigen::ArrayXd::LinSpaced(w.size(), -1.0, 1.0);
  Eigen::ArrayXd t = 1.0 + (-y * w.array()).exp();
  double s = 0;
  for (int i = 0; i < t.size(); i++) s += std::log(t[i]);
  return s;
}

int main() {
  const int n = 7;
  Eigen::VectorXd z(n), dz = Eigen::VectorXd::Zero(n), dw = Eigen::VectorXd::Zero(n);
  for (int i = 0; i < n; i++) z[i] = 0.3 * i - 0.8 + 0.05 * i * i;
  enzyme::autodiff<enzyme::Reverse>(lse, enzyme::Duplicated<const Eigen::VectorXd &>(z, dz));
  enzyme::autodiff<enzyme::Reverse>(nll, enzyme::Duplicated<const Eigen::VectorXd &>(z, dw));
  double s = z.array().exp().sum();
  char name[32];
  for (int i = 0; i < n; i++) {
    double y = -1.0 + 2.0 * i / (n - 1), e = std::exp(-y * z[i]);
    std::snprintf(name, sizeof name, "lse_%d", i);
    check(name, dz[i], std::exp(z[i]) / s);
    std::snprintf(name, sizeof name, "nll_%d", i);
    check(name, dw[i], -y * e / (1 + e));
  }
  double xs[n], dxs[n] = {0};
  for (int i = 0; i < n; i++) xs[i] = std::sin(0.77 * i + 0.3) * 2.3;
  __enzyme_autodiff((void *)ss, enzyme_dup, xs, dxs, enzyme_const, n);
  for (int i = 0; i < n; i++) {
    std::snprintf(name, sizeof name, "ss_%d", i);
    check(name, dxs[i], (i + 1) * 1.5 * std::sqrt(std::fabs(xs[i])));
  }
  float v[9] = {0.5f, 1.0f, 1.5f, 2.0f, 2.5f, -0.7f, 3.3f, 7.1f, -12.2f}, dv[9] = {0};
  __enzyme_autodiff((void *)fl, enzyme_dup, v, dv, enzyme_const, 9);
  for (int i = 0; i < 9; i++) {
    std::snprintf(name, sizeof name, "fl_%d", i);
    double want = std::exp(v[i]) + 1.5 * std::sqrt(std::fabs(v[i]));
    int ok = std::fabs(dv[i] - want) <= 1e-5 * (1.0 + want);
    std::printf("CHECK %s %.8g %.8g%s\n", name, dv[i], want, ok ? "" : "  <-- FAILED");
    failed += !ok;
  }
  return failed;
}
