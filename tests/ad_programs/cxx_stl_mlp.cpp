/* An MLP layer written with STL containers and algorithms (vector of vectors, inner_product,
   transform with a lambda, unique_ptr<array>, max_element, accumulate); at -O0 the element copies
   are typed through TBAA from the bitcode compile. */
#include <vector>
#include <numeric>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <array>
#include <memory>
extern "C" double __enzyme_autodiff(void*, ...);
extern "C" double __enzyme_fwddiff(void*, ...);
extern "C" int enzyme_const, enzyme_dup;
struct Layer { std::vector<std::vector<double>> W; std::vector<double> b;
  std::vector<double> apply(const std::vector<double>& x) const { std::vector<double> y(b);
    for (size_t i = 0; i < W.size(); i++) y[i] += std::inner_product(W[i].begin(), W[i].end(), x.begin(), 0.0);
    std::transform(y.begin(), y.end(), y.begin(), [](double v) { return std::tanh(v); }); return y; } };
double loss(const double *p, int n) {
  std::vector<double> x(p, p + n);
  Layer L; L.W.assign(3, std::vector<double>(n)); L.b = {0.1, -0.2, 0.3};
  for (int i = 0; i < 3; i++) for (int j = 0; j < n; j++) L.W[i][j] = std::sin(i + j) * p[(i + j) % n];
  auto y = L.apply(x);
  auto u = std::make_unique<std::array<double, 3>>();
  std::copy(y.begin(), y.end(), u->begin());
  double mx = *std::max_element(u->begin(), u->end());
  return std::accumulate(u->begin(), u->end(), 0.0, [](double a, double b) { return a + b * b; }) + mx;
}
int main() { const int n = 4; double p[n] = {0.3, -0.5, 0.8, 0.1}, dp[n] = {0};
  __enzyme_autodiff((void*)loss, enzyme_dup, p, dp, enzyme_const, n);
  int failed = 0;
  for (int i = 0; i < n; i++) { double h = 1e-6, s = p[i]; p[i] = s + h; double a = loss(p, n); p[i] = s - h; double b = loss(p, n); p[i] = s;
    double want = (a - b) / (2 * h); int ok = std::fabs(dp[i] - want) <= 1e-5 * (1 + std::fabs(want)); failed += !ok;
    printf("CHECK dp[%d] %.12g %.12g%s\n", i, dp[i], want, ok ? "" : "  <-- FAILED"); }
  // forward/reverse dot test: the tangent along a pseudo-random direction v equals v . gradient
  double v[n], vdp = 0;
  for (int i = 0; i < n; i++) { v[i] = std::sin(1.3 + 7.1 * i); vdp += v[i] * dp[i]; }
  double jv = __enzyme_fwddiff((void*)loss, enzyme_dup, p, v, enzyme_const, n);
  int ok = std::fabs(jv - vdp) <= 1e-5 * (1 + std::fabs(vdp)); failed += !ok;
  printf("CHECK dot_loss %.12g %.12g%s\n", jv, vdp, ok ? "" : "  <-- FAILED");
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0; }
