// Eigen's vectorized log, log1p and expm1 (a Poisson log-likelihood, a log-barrier): Eigen
// splits x into fraction and exponent on its bits (pfrexp: the exponent field set to a
// constant), which was refused ("integer arithmetic on data that holds a float"); the fraction
// is now a scaling of x by a power of two (ad/structure/frexp_bits.py).
// poisson(r) = sum y_i log r_i - r_i:        d/dr_i = y_i / r_i - 1           (double)
// barrier(x) = sum log(1 + x_i^2) + log1p|x_i| + expm1(x_i) + sqrt(1 + x_i^2) in float:
//   d/dx_i = 2 x_i / (1 + x_i^2) + sign(x_i) / (1 + |x_i|) + exp(x_i) + x_i / sqrt(1 + x_i^2)
// (float sqrt: x86's approximate reciprocal square root and a Newton step; under AVX-512 its
// 14-bit form, rsqrt14, refused before)
#include <Eigen/Dense>
#include <cmath>
#include <cstdio>
static int failed;
static void check(const char *name, double got, double want, double tol) {
  int ok = std::fabs(got - want) <= tol * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.9g %.9g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}

extern "C" {
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
void __enzyme_fwddiff(void *, ...);
}

void poisson(const double *rate, const double *counts, int n, double *out) {
  Eigen::Map<const Eigen::ArrayXd> r(rate, n), y(counts, n);
  *out = (y * r.log() - r).sum();
}

void barrier(const float *xin, int n, float *out) {
  Eigen::Map<const Eigen::ArrayXf> x(xin, n);
  Eigen::ArrayXf s = (1.0f + x.square()).log() + x.abs().log1p() + x.expm1() +
                     (1.0f + x.square()).sqrt();
  *out = s.sum();
}

int main() {
  const int n = 11;
  double r[n], y[n], dr[n] = {0}, out = 0, dout = 1;
  float x[n], dx[n] = {0}, fout = 0, fdout = 1;
  for (int i = 0; i < n; i++) {
    r[i] = 0.2 + 0.7 * i + 1e-3 * i * i;
    y[i] = (i * 7) % 5;
    x[i] = 0.35f * i - 1.6f;
  }
  __enzyme_autodiff((void *)poisson, enzyme_dup, r, dr, enzyme_const, y, enzyme_const, n,
                    enzyme_dup, &out, &dout);
  __enzyme_autodiff((void *)barrier, enzyme_dup, x, dx, enzyme_const, n, enzyme_dup, &fout,
                    &fdout);
  char name[32];
  for (int i = 0; i < n; i++) {
    double t[n] = {0}, o = 0, dot = 0;
    t[i] = 1;
    __enzyme_fwddiff((void *)poisson, enzyme_dup, r, t, enzyme_const, y, enzyme_const, n,
                     enzyme_dup, &o, &dot);
    double want = y[i] / r[i] - 1;
    std::snprintf(name, sizeof name, "poisson_%d", i);
    check(name, dr[i], want, 1e-12);
    std::snprintf(name, sizeof name, "poisson_fwd_%d", i);
    check(name, dot, want, 1e-12);

    float ft[n] = {0}, fo = 0, fdot = 0;
    ft[i] = 1;
    __enzyme_fwddiff((void *)barrier, enzyme_dup, x, ft, enzyme_const, n, enzyme_dup, &fo,
                     &fdot);
    double xi = x[i];
    double fwant = 2 * xi / (1 + xi * xi) + (xi > 0 ? 1 : -1) / (1 + std::fabs(xi)) +
                   std::exp(xi) + xi / std::sqrt(1 + xi * xi);
    std::snprintf(name, sizeof name, "barrier_%d", i);
    check(name, dx[i], fwant, 1e-5);
    std::snprintf(name, sizeof name, "barrier_fwd_%d", i);
    check(name, fdot, fwant, 1e-5);
  }
  return failed != 0;
}
