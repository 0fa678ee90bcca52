/* std::list holding active values: its nodes are linked by libstdc++'s non-inline
   _List_node_base::_M_hook / _M_reverse (no bitcode), which enzyme-cc mirrors on the shadow
   list. Reverse and forward mode against central finite differences. */
#include <cmath>
#include <cstdio>
#include <list>
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
struct V2 { double d[2]; };
V2 __enzyme_fwddiff2(void *, ...) __asm__("__enzyme_fwddiff");

double weighted(double x) {
  std::list<double> l;
  for (int i = 0; i < 6; i++) l.push_back(std::sin(x * (i + 1)));
  l.push_front(x * x);
  l.reverse();
  l.pop_back();                      // drops x*x again
  double s = 0;
  int k = 1;
  for (double v : l) s += v * k++;
  return s;
}

int main() {
  const double x = 0.8, h = 1e-6;
  double fd = (weighted(x + h) - weighted(x - h)) / (2 * h);
  check("reverse", __enzyme_autodiff((void *)weighted, x), fd);
  check("forward", __enzyme_fwddiff((void *)weighted, x, 1.0), fd);
  // vector forward mode: 2 tangents of x in one call versus 2 width-1 calls
  const double v[2] = {std::sin(1.3), std::sin(8.4)};
  V2 t = __enzyme_fwddiff2((void *)weighted, enzyme_width, 2, x, v[0], v[1]);
  for (int k = 0; k < 2; k++) checkv("weighted", k, -1, t.d[k], __enzyme_fwddiff((void *)weighted, x, v[k]));
  return failed != 0;
}
