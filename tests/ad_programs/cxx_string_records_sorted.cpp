// A std::vector of records holding a std::string name, a std::vector<double> of values and a
// double weight, built by push_back, reordered by std::sort on the weight, copied and erased
// from. The sort's moves copy each string's small buffer as an i64 with only a char tag (was
// refused: "cannot deduce whether this integer copy ... moves float data"); the string tags of
// the record's other accesses place a std::string there, whose IR type says the bytes are an
// integer. The moved record's character pointer was then taken for a pointer to doubles (the
// record's vector field's loads: refused too). Reverse mode against central differences,
// forward mode against reverse.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>
static int failed;
static void check(const char *name, int i, double got, double want, double tol) {
  bool ok = std::fabs(got - want) <= tol * (1.0 + std::fabs(want));
  std::printf("CHECK %s[%d] %.12g %.12g%s\n", name, i, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern "C" {
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}
struct Cell {
  std::string tag;
  std::vector<double> vals;
  double w;
};
enum { N = 6 };

double loss(const double *x, int n) {
  std::vector<Cell> cells;
  for (int i = 0; i < n; i++) {
    Cell c;
    c.tag = "cell-" + std::to_string(i);
    c.vals = {x[i], x[i] * x[i], std::sin(x[i])};
    c.w = 0.1 * ((3 * i) % n) + 0.01 * i;
    cells.push_back(c);
  }
  std::sort(cells.begin(), cells.end(), [](const Cell &a, const Cell &b) { return a.w < b.w; });
  double s = 0;
  for (size_t k = 0; k < cells.size(); k++)
    for (double v : cells[k].vals) s += (k + 1) * v * (cells[k].tag.size() > 5 ? 1.0 : 0.0);
  std::vector<Cell> copy = cells;
  copy.erase(copy.begin());
  for (auto &c : copy) s += c.vals[2] * c.w;
  return s;
}

int main() {
  double x[N], dx[N] = {0}, dir[N];
  for (int i = 0; i < N; i++) {
    x[i] = 0.3 + 0.21 * i - 0.07 * (i % 3);
    dir[i] = 0.4 - 0.05 * i;
  }
  __enzyme_autodiff((void *)loss, enzyme_dup, x, dx, enzyme_const, (int)N);
  double dot = 0, h = 1e-6;
  for (int i = 0; i < N; i++) {
    double xp[N], xm[N];
    for (int j = 0; j < N; j++) xp[j] = xm[j] = x[j];
    xp[i] += h;
    xm[i] -= h;
    check("dx", i, dx[i], (loss(xp, N) - loss(xm, N)) / (2 * h), 1e-7);
    dot += dx[i] * dir[i];
  }
  check("dot", 0, __enzyme_fwddiff((void *)loss, enzyme_dup, x, dir, enzyme_const, (int)N), dot,
        1e-9);
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
