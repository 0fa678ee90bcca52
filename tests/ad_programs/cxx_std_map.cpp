/* std::map / std::set holding active values: libstdc++'s red-black tree links nodes in
   non-inline library functions (_Rb_tree_insert_and_rebalance, _Rb_tree_increment,
   _Rb_tree_rebalance_for_erase) that enzyme-cc mirrors on the shadow tree, and the inline parts
   return node pointers in pairs ({ ptr, ptr } aggregates with shadows). Reverse and forward
   mode against central finite differences. */
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = std::fabs(got - want) <= 1e-5 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
/* vector forward mode: lane k (entry i >= 0) of a width-N call versus a width-1 call */
static void checkv(const char *name, int lane, int i, double got, double want) {
  char buf[64];
  if (i < 0) snprintf(buf, sizeof buf, "vec_%s_%d", name, lane);
  else snprintf(buf, sizeof buf, "vec_%s_%d_%d", name, lane, i);
  check(buf, got, want);
}
extern "C" {
int enzyme_width;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}
struct V4 { double d[4]; };
V4 __enzyme_fwddiff4(void *, ...) __asm__("__enzyme_fwddiff");

double by_key(double x) {
  std::map<int, double> m;
  for (int i = 0; i < 12; i++) m[(i * 7) % 12] = std::sin(x * (i + 1));   // out of order
  m.erase(3);
  m.erase(m.begin());
  m[20] += x * x;
  double s = 0;
  int k = 1;
  for (auto &kv : m) s += kv.second * k++;
  return s;
}

double sorted(double x) {
  std::set<double> s;                       // ordered by the active values themselves
  for (int i = 0; i < 8; i++) s.insert(std::cos(x * (i + 2)) + 0.01 * i);
  double r = 0;
  int k = 1;
  for (double v : s) r += v * k++;
  return r;
}

int main() {
  const double x = 0.8, h = 1e-6;
  double fd = (by_key(x + h) - by_key(x - h)) / (2 * h);
  check("map_reverse", __enzyme_autodiff((void *)by_key, x), fd);
  check("map_forward", __enzyme_fwddiff((void *)by_key, x, 1.0), fd);
  fd = (sorted(x + h) - sorted(x - h)) / (2 * h);
  check("set_reverse", __enzyme_autodiff((void *)sorted, x), fd);
  check("set_forward", __enzyme_fwddiff((void *)sorted, x, 1.0), fd);
  // vector forward mode: 4 tangents of x in one call versus 4 width-1 calls
  const double v[4] = {1.0, -0.5, 2.0, 0.25};
  V4 t = __enzyme_fwddiff4((void *)by_key, enzyme_width, 4, x, v[0], v[1], v[2], v[3]);
  for (int k = 0; k < 4; k++) checkv("map", k, -1, t.d[k], __enzyme_fwddiff((void *)by_key, x, v[k]));
  t = __enzyme_fwddiff4((void *)sorted, enzyme_width, 4, x, v[0], v[1], v[2], v[3]);
  for (int k = 0; k < 4; k++) checkv("set", k, -1, t.d[k], __enzyme_fwddiff((void *)sorted, x, v[k]));
  return failed != 0;
}
