// A std::vector<std::unique_ptr<Base>> grown by push_back inside the differentiated function:
// when it grows, libstdc++ relocates the unique_ptrs as 64-bit integers (ptrtoint, stored as
// i64, loaded back as pointers). The objects that were only reached through those integers
// had no shadow, and the virtual calls through the reloaded pointers got a null shadow `this`
// (a segfault, found by a new-user check). Objects holding constants and objects holding
// values computed from the input, the vector growing from capacity 1 to 8.
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = std::fabs(got - want) <= 1e-9 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern "C" {
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}

struct Term {
  virtual ~Term() = default;
  virtual double eval(const double *x) const = 0;
};
struct Linear : Term {            // a constant coefficient
  double a;
  int i;
  Linear(double a, int i) : a(a), i(i) {}
  double eval(const double *x) const override { return a * x[i]; }
};
struct Product : Term {           // a coefficient computed from the input
  double c;
  int i;
  Product(double c, int i) : c(c), i(i) {}
  double eval(const double *x) const override { return c * std::sin(x[i]); }
};

// sum_i (0.1 (i + 1)) x_i + sum_i x_i^2 sin(x_{(i+1)%n})
double energy(const double *x, int n) {
  std::vector<std::unique_ptr<Term>> terms;
  for (int i = 0; i < n; i++) {
    terms.push_back(std::make_unique<Linear>(0.1 * (i + 1), i));
    terms.push_back(std::make_unique<Product>(x[i] * x[i], (i + 1) % n));
  }
  double e = 0;
  for (const auto &t : terms) e += t->eval(x);
  return e;
}

int main() {
  const int n = 4;
  double x[n] = {0.3, -1.2, 0.8, 2.0}, dx[n] = {0}, v[n] = {0.5, 1.0, -0.3, 0.2};
  __enzyme_autodiff((void *)energy, enzyme_dup, x, dx, enzyme_const, n);
  double vdx = 0;
  for (int i = 0; i < n; i++) {
    int prev = (i + n - 1) % n;        // x_prev^2 sin(x_i) and x_i^2 sin(x_next)
    double want = 0.1 * (i + 1) + 2 * x[i] * std::sin(x[(i + 1) % n]) +
                  x[prev] * x[prev] * std::cos(x[i]);
    char name[16];
    std::snprintf(name, sizeof name, "dx[%d]", i);
    check(name, dx[i], want);
    vdx += v[i] * dx[i];
  }
  check("dot_energy", __enzyme_fwddiff((void *)energy, enzyme_dup, x, v, enzyme_const, n), vdx);
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
