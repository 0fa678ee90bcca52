// A std::vector<std::array<double, 3>> and a std::vector<std::complex<double>> grown by
// push_back inside the differentiated function (no reserve: they relocate while growing).
// Kept out of line (-fno-inline), libstdc++ relocates the arrays with one memmove in
// std::__relocate_a_1<std::array<double, 3>>, whose only type information is its C++ signature
// (refused before: "cannot deduce the type of the memory being copied"). Reverse mode against
// central differences, forward mode against reverse.
#include <array>
#include <cmath>
#include <complex>
#include <cstdio>
#include <vector>
static int failed;
static void check(const char *name, int i, double got, double want, double tol) {
  bool ok = std::fabs(got - want) <= tol * (1.0 + std::fabs(want));
  std::printf("CHECK %s[%d] %.12g %.12g%s\n", name, i, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern "C" {
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}
using V3 = std::array<double, 3>;
enum { N = 12 };

static V3 cross(const V3 &a, const V3 &b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

// the areas of the triangles fanned from the first point, plus |prod (z_k + 0.1)|
double loss(const double *x, int n) {
  std::vector<V3> ps;
  for (int i = 0; i + 2 < n; i += 3) ps.push_back({x[i], x[i + 1], x[i + 2]});
  double s = 0;
  for (size_t i = 1; i + 1 < ps.size(); i++) {
    V3 a = {ps[i][0] - ps[0][0], ps[i][1] - ps[0][1], ps[i][2] - ps[0][2]};
    V3 b = {ps[i + 1][0] - ps[0][0], ps[i + 1][1] - ps[0][1], ps[i + 1][2] - ps[0][2]};
    V3 c = cross(a, b);
    s += 0.5 * std::sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
  }
  std::vector<std::complex<double>> z;
  for (int i = 0; i < n; i += 2) z.push_back(std::complex<double>(x[i], 0.5 * x[i + 1]));
  std::complex<double> p(1.0, 0.0);
  for (auto &c : z) p = p * (c + 0.1);
  return s + std::abs(p);
}

int main() {
  double x[N], dx[N] = {0}, dir[N];
  for (int i = 0; i < N; i++) {
    x[i] = 0.4 + 0.23 * i - 0.31 * (i % 4) + 0.05 * (i % 3);
    dir[i] = 0.1 + 0.02 * i;
  }
  __enzyme_autodiff((void *)loss, enzyme_dup, x, dx, enzyme_const, (int)N);
  double dot = 0, h = 1e-6;
  for (int i = 0; i < N; i++) {
    double xp[N], xm[N];
    for (int j = 0; j < N; j++) xp[j] = xm[j] = x[j];
    xp[i] += h;
    xm[i] -= h;
    check("dx", i, dx[i], (loss(xp, N) - loss(xm, N)) / (2 * h), 1e-6);
    dot += dx[i] * dir[i];
  }
  double t = __enzyme_fwddiff((void *)loss, enzyme_dup, x, dir, enzyme_const, (int)N);
  check("dot", 0, t, dot, 1e-9);
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
