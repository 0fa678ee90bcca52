// Function templates instantiated for double and float, differentiated with Enzyme's C++
// templated marker declaration (the marker's name is mangled).
#include <cmath>
#include <cstdio>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
static void checki(const char *name, int i, double got, double want) {
  char buf[64];
  snprintf(buf, sizeof buf, "%s[%d]", name, i);
  check(buf, got, want);
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
extern "C" {
int enzyme_dup, enzyme_const;
}

template <typename RT, typename... Args>
RT __enzyme_autodiff(void *, Args...);
template <typename RT, typename... Args>
RT __enzyme_fwddiff(void *, Args...);

template <typename T>
T poly(T x) { return T(3) * x * x * x - T(2) * x + T(1); }

template <typename T, int N>
T norm2(const T *v) {
  T s = 0;
  for (int i = 0; i < N; i++) s += v[i] * v[i];
  return std::sqrt(s);
}

int main() {
  double x = 0.7;
  check("poly_double", __enzyme_autodiff<double>((void *)poly<double>, x), 9 * x * x - 2);
  float xf = 0.7f;
  check("poly_float", __enzyme_autodiff<float>((void *)poly<float>, xf), 9.0 * xf * xf - 2);
  double v[3] = {1, -2, 2}, dv[3] = {0};
  __enzyme_autodiff<void>((void *)norm2<double, 3>, enzyme_dup, v, dv);
  for (int i = 0; i < 3; i++) checki("norm2", i, dv[i], v[i] / 3.0);
  // forward/reverse dot test: the tangent along a direction t equals t . gradient
  double t[3] = {std::sin(1.3), std::sin(8.4), std::sin(15.5)};
  check("dot_poly_double", __enzyme_fwddiff<double>((void *)poly<double>, x, t[0]),
        t[0] * __enzyme_autodiff<double>((void *)poly<double>, x));
  float tf = 0.3f;
  check("dot_poly_float", __enzyme_fwddiff<float>((void *)poly<float>, xf, tf),
        tf * __enzyme_autodiff<float>((void *)poly<float>, xf));
  check("dot_norm2", __enzyme_fwddiff<double>((void *)norm2<double, 3>, enzyme_dup, v, t),
        t[0] * dv[0] + t[1] * dv[1] + t[2] * dv[2]);
  return report();
}
