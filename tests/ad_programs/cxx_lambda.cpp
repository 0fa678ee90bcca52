// C++ lambdas capturing by reference and by value inside the differentiated function, and a
// generic algorithm template taking the lambda.
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

template <typename F>
static double reduce(const double *x, int n, F f) {
  double s = 0;
  for (int i = 0; i < n; i++) s += f(x[i], i);
  return s;
}

double with_lambdas(const double *x, int n, double a) {
  double bias = 0.5 * a;
  auto term = [&](double v, int i) { return a * v * v + bias * i; };
  auto other = [a](double v, int) { return std::sin(a * v); };
  return reduce(x, n, term) + reduce(x, n, other);
}

int main() {
  const int N = 4;
  double x[N] = {0.5, -1, 2, 0.3}, dx[N] = {0}, a = 1.3;
  double da = __enzyme_autodiff((void *)with_lambdas, enzyme_dup, x, dx, enzyme_const, N, a);
  double want_da = 0;
  for (int i = 0; i < N; i++) {
    checki("dx", i, dx[i], 2 * a * x[i] + a * std::cos(a * x[i]));
    want_da += x[i] * x[i] + 0.5 * i + x[i] * std::cos(a * x[i]);
  }
  check("da", da, want_da);
  // forward/reverse dot test: the tangent along a direction v equals v . gradient
  double vx[N], va = rnd(N), vg = va * da;
  for (int i = 0; i < N; i++) { vx[i] = rnd(i); vg += vx[i] * dx[i]; }
  check("dot_with_lambdas", __enzyme_fwddiff((void *)with_lambdas, enzyme_dup, x, vx, enzyme_const, N, a, va), vg);
  return report();
}
