// std::stable_sort over a std::vector of records inside the differentiated function: once by a
// constant key (the records' order does not depend on the input), once by the active value
// itself. stable_sort merges through a temporary buffer that std::get_temporary_buffer hands
// back in a pair<T *, ptrdiff_t> returned by value; kept out of line (-fno-inline) the buffer
// had no shadow and the reverse sweep wrote the moved values' adjoints through a null one (a
// segfault). Reverse mode against the analytic gradient, forward mode against reverse.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>
static int failed;
static void check(const char *name, int i, double got, double want) {
  bool ok = std::fabs(got - want) <= 1e-9 * (1.0 + std::fabs(want));
  std::printf("CHECK %s[%d] %.12g %.12g%s\n", name, i, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern "C" {
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}
struct Item { double key, val; int id; };
enum { N = 9 };

static double key_of(int i) { return std::sin(3.0 * i + 1.0); }

// sum_r (r + 1) val_(r) over the order by key, plus sum_r w_r val_(r) over the order by val
double loss(const double *x, int n) {
  std::vector<Item> v;
  for (int i = 0; i < n; i++) v.push_back({key_of(i), x[i] * x[i], i});
  std::stable_sort(v.begin(), v.end(), [](const Item &a, const Item &b) { return a.key < b.key; });
  double s = 0;
  for (int r = 0; r < n; r++) s += (r + 1) * v[r].val;
  std::stable_sort(v.begin(), v.end(), [](const Item &a, const Item &b) { return a.val < b.val; });
  for (int r = 0; r < n; r++) s += 0.5 * (n - r) * v[r].val;
  return s;
}

int main() {
  double x[N], dx[N] = {0}, dir[N];
  for (int i = 0; i < N; i++) {
    x[i] = 0.3 + 0.17 * i - 0.05 * (i % 3);
    dir[i] = 0.2 - 0.03 * i;
  }
  __enzyme_autodiff((void *)loss, enzyme_dup, x, dx, enzyme_const, (int)N);
  // ranks by key and by value (values x_i^2 are distinct here)
  double dot = 0;
  for (int i = 0; i < N; i++) {
    int by_key = 0, by_val = 0;
    for (int j = 0; j < N; j++) {
      by_key += key_of(j) < key_of(i) || (key_of(j) == key_of(i) && j < i);
      by_val += x[j] * x[j] < x[i] * x[i];
    }
    double want = ((by_key + 1) + 0.5 * (N - by_val)) * 2 * x[i];
    check("dx", i, dx[i], want);
    dot += dx[i] * dir[i];
  }
  double t = __enzyme_fwddiff((void *)loss, enzyme_dup, x, dir, enzyme_const, (int)N);
  check("dot", 0, t, dot);
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
