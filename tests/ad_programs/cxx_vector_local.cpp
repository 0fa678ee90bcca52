// A std::vector<double> built inside the differentiated function (heap allocation through
// operator new, push_back growth, destructor).
#include <cmath>
#include <cstdio>
#include <vector>
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
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}
// deterministic pseudo-random direction entries
static double rnd(int k) { return std::sin(1.3 + 7.1 * k); }

double local_vec(const double *x, int n) {
  std::vector<double> t(n);
  for (int i = 0; i < n; i++) t[i] = std::sin(x[i]);
  double s = 0;
  for (double v : t) s += v * v;
  return s;
}

double pushed(const double *x, int n) {
  std::vector<double> t;
  for (int i = 0; i < n; i++) t.push_back(x[i] * x[i]);
  double s = 0;
  for (size_t i = 0; i < t.size(); i++) s += t[i] * x[i];
  return s;
}

int main() {
  const int N = 5;
  double x[N] = {0.5, -1, 2, 0.3, 1.2}, dx[N] = {0};
  __enzyme_autodiff((void *)local_vec, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("local_vec", i, dx[i], 2 * std::sin(x[i]) * std::cos(x[i]));
  double dy[N] = {0};
  __enzyme_autodiff((void *)pushed, enzyme_dup, x, dy, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("pushed", i, dy[i], 3 * x[i] * x[i]);
  // forward/reverse dot test: the tangent along a direction v equals v . gradient
  double v[N], vdx = 0, vdy = 0;
  for (int i = 0; i < N; i++) { v[i] = rnd(i); vdx += v[i] * dx[i]; vdy += v[i] * dy[i]; }
  check("dot_local_vec", __enzyme_fwddiff((void *)local_vec, enzyme_dup, x, v, enzyme_const, N), vdx);
  check("dot_pushed", __enzyme_fwddiff((void *)pushed, enzyme_dup, x, v, enzyme_const, N), vdy);
  return report();
}
