// C++ new[]/delete[] of a temporary array and new/delete of a small object.
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
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}
// deterministic pseudo-random direction entries
static double rnd(int k) { return std::sin(1.3 + 7.1 * k); }

struct Acc {
  double value;
  double weight;
};

double with_new(const double *x, int n) {
  double *t = new double[n];
  for (int i = 0; i < n; i++) t[i] = std::sin(x[i]);
  Acc *a = new Acc{0.0, 2.0};
  for (int i = 0; i < n; i++) a->value += a->weight * t[i] * x[i];
  double r = a->value;
  delete a;
  delete[] t;
  return r;
}

int main() {
  const int N = 5;
  double x[N] = {0.5, -1, 2, 0.3, 1.2}, dx[N] = {0};
  __enzyme_autodiff((void *)with_new, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("with_new", i, dx[i], 2 * (std::cos(x[i]) * x[i] + std::sin(x[i])));
  // forward/reverse dot test: the tangent along a direction v equals v . gradient
  double v[N], vdx = 0;
  for (int i = 0; i < N; i++) { v[i] = rnd(i); vdx += v[i] * dx[i]; }
  check("dot_with_new", __enzyme_fwddiff((void *)with_new, enzyme_dup, x, v, enzyme_const, N), vdx);
  return report();
}
