// Eigen's vectorized float sin and cos (a wave model's loss): Eigen reduces the argument with
// the quadrant's integer bits, sets the result's sign with a xor of the quadrant and x's sign
// bit, and reduces huge arguments (|x| > 25966) by integer arithmetic on x's mantissa. The
// sign masks became float selects (refused before); the huge-argument path, whose derivative
// would be lost, stops the derivative with an error if it runs (argument "huge").
// loss(a) = sum sin(a_i t_i) + a_i cos(a_i), t_i = 0.3 + 0.1 i:
//   d/da_i = t_i cos(a_i t_i) + cos(a_i) - a_i sin(a_i)
#include <Eigen/Dense>
#include <cmath>
#include <cstdio>
#include <cstring>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = std::fabs(got - want) <= 1e-5 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.9g %.9g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}

extern "C" {
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
void __enzyme_fwddiff(void *, ...);
}

void loss(const float *ain, int n, float *out) {
  Eigen::Map<const Eigen::ArrayXf> a(ain, n);
  Eigen::ArrayXf t = Eigen::ArrayXf::LinSpaced(n, 0.3f, 0.3f + 0.1f * (n - 1));
  *out = ((a * t).sin() + a * a.cos()).sum();
}

int main(int argc, char **argv) {
  const int n = 13;
  float a[n], t[n], da[n] = {0}, out = 0, dout = 1;
  float scale = argc > 1 && !std::strcmp(argv[1], "huge") ? 1e5f : 1.0f;
  for (int i = 0; i < n; i++) {
    a[i] = scale * (0.45f * i - 2.9f);
    t[i] = 0.3f + 0.1f * i;
  }
  __enzyme_autodiff((void *)loss, enzyme_dup, a, da, enzyme_const, n,
                    enzyme_dup, &out, &dout);
  char name[32];
  for (int i = 0; i < n; i++) {
    float ta[n] = {0}, o = 0, dot = 0;
    ta[i] = 1;
    __enzyme_fwddiff((void *)loss, enzyme_dup, a, ta, enzyme_const, n,
                     enzyme_dup, &o, &dot);
    double x = a[i], y = t[i];
    double want = y * std::cos(x * y) + std::cos(x) - x * std::sin(x);
    std::snprintf(name, sizeof name, "trig_%d", i);
    check(name, da[i], want);
    std::snprintf(name, sizeof name, "trig_fwd_%d", i);
    check(name, dot, want);
  }
  return failed != 0;
}
