#include "kernels.h"

double sq(double x) { return x * x; }

double rosenbrock(const double *x, int n) {
  double f = 0;
  for (int i = 0; i + 1 < n; i++)
    f += 100 * sq(x[i + 1] - sq(x[i])) + sq(1 - x[i]);
  return f;
}
