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
extern "C" {
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}

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
  return failed != 0;
}
