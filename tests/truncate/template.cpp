// Enzyme's C++ declarations of the truncation markers (templates returning the function's own
// pointer type), with mem and op mode on a function that takes an array.
#include "check.h"
template <typename fty> fty *__enzyme_truncate_mem_func(fty *, int, int);
template <typename fty> fty *__enzyme_truncate_op_func(fty *, int, int);
template <typename fty> fty *__enzyme_truncate_op_func(fty *, int, int, int);
extern double __enzyme_truncate_mem_value(...);
extern double __enzyme_expand_mem_value(...);

static double norm2(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return sqrt(s);
}
static float norm2_f(const float *x, int n) {
  float s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return sqrtf(s);
}
int main() {
  const int n = 5;
  double x[n], xm[n];
  float xf[n];
  for (int i = 0; i < n; i++) {
    x[i] = rnd(i), xf[i] = (float)x[i];
    xm[i] = __enzyme_truncate_mem_value(x[i], 64, 32);
  }
  double m = __enzyme_expand_mem_value(__enzyme_truncate_mem_func(norm2, 64, 32)(xm, n), 64, 32);
  check_exact("cxx_mem32", m, norm2_f(xf, n));
  check_exact("cxx_op32", __enzyme_truncate_op_func(norm2, 64, 32)(x, n), norm2_f(xf, n));
  double o = __enzyme_truncate_op_func(norm2, 64, 11, 40)(x, n);
  check_near("cxx_op_p40", o, norm2(x, n), 1e-11);
  return report();
}
