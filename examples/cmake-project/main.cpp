// Gradients of a C library function (logsumexp: the gradient is softmax) and of a C++ function
// (a polynomial evaluated by Horner's rule: the derivative in x is the derivative polynomial),
// each printed next to its exact value.
#include <cmath>
#include <cstdio>
#include <vector>

#include "logsumexp.h"

// Enzyme's markers. C++ may declare __enzyme_autodiff as overloads: their mangled names still
// contain __enzyme_autodiff, which is what the link step looks for.
extern "C" {
int enzyme_dup, enzyme_const;
}
void __enzyme_autodiff(void *, int, const double *, double *, int, int);
double __enzyme_autodiff(void *, int, const double *, int, double);

// c[0] + c[1] x + ... + c[n-1] x^(n-1)
static double horner(const double *c, int n, double x) {
  double y = 0;
  for (int i = n - 1; i >= 0; i--) y = y * x + c[i];
  return y;
}

int main() {
  std::vector<double> x = {0.5, -1.0, 2.0, 0.25}, dx(x.size(), 0.0);
  __enzyme_autodiff((void *)logsumexp, enzyme_dup, x.data(), dx.data(), enzyme_const,
                    (int)x.size());
  double total = 0;
  for (double v : x) total += std::exp(v);
  for (size_t i = 0; i < x.size(); i++)
    std::printf("d logsumexp/d x%zu  %14.8f  exact %14.8f\n", i, dx[i], std::exp(x[i]) / total);

  std::vector<double> c = {1.0, -3.0, 0.5, 2.0};
  double t = 1.25;
  double d = __enzyme_autodiff((void *)horner, enzyme_const, c.data(), (int)c.size(), t);
  double exact = c[1] + 2 * c[2] * t + 3 * c[3] * t * t;
  std::printf("d horner/d t       %14.8f  exact %14.8f\n", d, exact);
  return 0;
}
