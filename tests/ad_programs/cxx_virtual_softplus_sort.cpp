// A polynomial model behind a virtual call (derived class calling the base), std::vector
// copies, range-for, std::sort of the weights, log1p/exp.
#include <vector>
#include <map>
#include <string>
#include <cmath>
#include <cstdio>
#include <algorithm>
extern "C" { double __enzyme_autodiff(void*, ...); double __enzyme_fwddiff(void*, ...); int enzyme_const, enzyme_dup; }
struct Param { std::string name; double value; };
class Model {
 public:
  explicit Model(const std::vector<double>& w) : w_(w) {}
  virtual ~Model() = default;
  virtual double predict(double x) const { double y = 0, p = 1; for (double c : w_) { y += c * p; p *= x; } return y; }
 protected:
  std::vector<double> w_;
};
class Softplus : public Model { public: using Model::Model; double predict(double x) const override { return std::log1p(std::exp(Model::predict(x))); } };
double loss(const double *w, int n) {
  std::vector<double> wv(w, w + n);
  Softplus m(wv);
  const Model &base = m;
  double xs[5] = {-1, -0.5, 0, 0.5, 1}, ys[5] = {0.2, 0.4, 0.7, 1.1, 1.6};
  double l = 0;
  for (int i = 0; i < 5; i++) { double r = base.predict(xs[i]) - ys[i]; l += r * r; }
  std::vector<double> sorted(wv); std::sort(sorted.begin(), sorted.end());
  return l + 0.01 * sorted.back() * sorted.back();
}
int main() { double w[3] = {0.5, 0.8, -0.2}, dw[3] = {0};
  __enzyme_autodiff((void*)loss, w, dw, enzyme_const, 3);
  int bad = 0; for (int i = 0; i < 3; i++) { double h = 1e-6, s = w[i]; w[i] = s + h; double a = loss(w, 3); w[i] = s - h; double b = loss(w, 3); w[i] = s;
    double fd = (a - b) / (2 * h); printf("CHECK dw[%d] %.12g %.12g%s\n", i, dw[i], fd, std::fabs(dw[i] - fd) > 1e-5 * (1 + std::fabs(fd)) ? "  <-- FAILED" : ""); bad += std::fabs(dw[i] - fd) > 1e-5 * (1 + std::fabs(fd)); }
  // forward/reverse dot test: the tangent along a pseudo-random direction v equals v . gradient
  double v[3], vdw = 0;
  for (int i = 0; i < 3; i++) { v[i] = std::sin(1.3 + 7.1 * i); vdw += v[i] * dw[i]; }
  double jv = __enzyme_fwddiff((void*)loss, w, v, enzyme_const, 3);
  printf("CHECK dot_loss %.12g %.12g%s\n", jv, vdw, std::fabs(jv - vdw) > 1e-5 * (1 + std::fabs(vdw)) ? "  <-- FAILED" : ""); bad += std::fabs(jv - vdw) > 1e-5 * (1 + std::fabs(vdw));
  if (bad) printf("FAILED: %d check(s)\n", bad);
  return bad != 0; }
