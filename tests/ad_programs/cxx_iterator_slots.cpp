// Iterators kept in local slots (unoptimized code, or -fno-inline: operator++ and operator* are
// calls on the slot) over an active std::vector<double> and over an enzyme_const object's
// std::vector<int> side by side. The constant vector's iterators need no shadow (building one
// from the constant object's null shadow faulted); the active vector's shadow iterator must
// still advance with the primal one (operator++ storing the moved pointer back into its slot),
// or every adjoint would land on the first element.
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

struct Weights {
  std::vector<int> exps;
  // sum_k w[k]^exps[k], w walked by an iterator beside the constant exponents' iterator
  double energy(std::vector<double> &w) const {
    auto term = [&](double x, int e) { return std::pow(x, e); };
    double s = 0;
    auto e = exps.begin();
    for (auto it = w.begin(); it != w.end(); ++it, ++e) s += term(*it, *e);
    return s;
  }
};

// the active vector's elements are scaled in place through a non-const iterator
static void scale(std::vector<double> &w, double c) {
  for (auto it = w.begin(); it != w.end(); ++it) *it *= c;
}

static double objective(const Weights *m, std::vector<double> *w) {
  scale(*w, 1.5);
  return m->energy(*w);
}

int main() {
  Weights m;
  m.exps = {1, 2, 3};
  std::vector<double> w = {0.5, -1.25, 2.0}, dw = {0, 0, 0};
  __enzyme_autodiff((void *)objective, enzyme_const, &m, enzyme_dup, &w, &dw);
  // w is scaled in place first: d/dw_k (1.5 w_k)^e = e 1.5^e w_k^(e-1) at the original w
  double w0[3] = {0.5, -1.25, 2.0};
  for (int k = 0; k < 3; ++k) {
    int e = m.exps[k];
    char name[16];
    std::snprintf(name, sizeof name, "dw[%d]", k);
    check(name, dw[k], e * std::pow(1.5, e) * std::pow(w0[k], e - 1));
  }
  std::vector<double> v = {0.5, -1.25, 2.0}, t = {0.3, -0.7, 1.1};
  double tangent = __enzyme_fwddiff((void *)objective, enzyme_const, &m, enzyme_dup, &v, &t);
  double want = 0;
  for (int k = 0; k < 3; ++k) {
    int e = m.exps[k];
    want += e * std::pow(1.5, e) * std::pow(w0[k], e - 1) * (k == 0 ? 0.3 : k == 1 ? -0.7 : 1.1);
  }
  check("fwd", tangent, want);
  return failed != 0;
}
