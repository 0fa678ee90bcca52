// std::vector<double> passed by reference (shadow vector of the same size), loops over .size()
// and over iterators.
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
/* vector forward mode: lane k (entry i >= 0) of a width-N call versus a width-1 call */
static void checkv(const char *name, int lane, int i, double got, double want) {
  char buf[64];
  if (i < 0) snprintf(buf, sizeof buf, "vec_%s_%d", name, lane);
  else snprintf(buf, sizeof buf, "vec_%s_%d_%d", name, lane, i);
  check(buf, got, want);
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
extern "C" {
int enzyme_dup, enzyme_const, enzyme_width, enzyme_dupv;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}
struct V4 { double d[4]; };
V4 __enzyme_fwddiff4(void *, ...) __asm__("__enzyme_fwddiff");
struct V2 { double d[2]; };
V2 __enzyme_fwddiff2(void *, ...) __asm__("__enzyme_fwddiff");
// deterministic pseudo-random direction entries
static double rnd(int k) { return std::sin(1.3 + 7.1 * k); }

double sumsq(const std::vector<double> &v) {
  double s = 0;
  for (size_t i = 0; i < v.size(); i++) s += v[i] * v[i];
  return s;
}

double weighted(const std::vector<double> &v, const std::vector<double> &w) {
  double s = 0;
  auto wi = w.begin();
  for (double x : v) s += *wi++ * std::exp(x);
  return s;
}

int main() {
  std::vector<double> v = {0.5, -1, 2, 1.5}, dv(4, 0.0), w = {1, 2, 3, 4};
  __enzyme_autodiff((void *)sumsq, enzyme_dup, &v, &dv);
  for (int i = 0; i < 4; i++) checki("sumsq", i, dv[i], 2 * v[i]);
  std::vector<double> dv2(4, 0.0);
  __enzyme_autodiff((void *)weighted, enzyme_dup, &v, &dv2, enzyme_const, &w);
  for (int i = 0; i < 4; i++) checki("weighted", i, dv2[i], w[i] * std::exp(v[i]));
  // forward/reverse dot test: the tangent along a direction t equals t . gradient
  std::vector<double> t(4);
  double tdv = 0, tdv2 = 0;
  for (int i = 0; i < 4; i++) { t[i] = rnd(i); tdv += t[i] * dv[i]; tdv2 += t[i] * dv2[i]; }
  check("dot_sumsq", __enzyme_fwddiff((void *)sumsq, enzyme_dup, &v, &t), tdv);
  check("dot_weighted", __enzyme_fwddiff((void *)weighted, enzyme_dup, &v, &t, enzyme_const, &w), tdv2);
  // vector forward mode: 4 shadow vectors in an array (dupv, stride sizeof(std::vector)) and
  // 2 separate shadow vectors (dup), versus one width-1 call per direction
  std::vector<double> t4[4];
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < 4; i++) t4[k].push_back(rnd(4 + 4 * k + i));
  V4 r4 = __enzyme_fwddiff4((void *)sumsq, enzyme_width, 4, enzyme_dupv, sizeof t4[0], &v, t4);
  for (int k = 0; k < 4; k++) checkv("sumsq", k, -1, r4.d[k], __enzyme_fwddiff((void *)sumsq, enzyme_dup, &v, &t4[k]));
  V2 r2 = __enzyme_fwddiff2((void *)weighted, enzyme_width, 2, enzyme_dup, &v, &t4[2], &t4[3], enzyme_const, &w);
  for (int k = 0; k < 2; k++)
    checkv("weighted", k, -1, r2.d[k], __enzyme_fwddiff((void *)weighted, enzyme_dup, &v, &t4[2 + k], enzyme_const, &w));
  return report();
}
