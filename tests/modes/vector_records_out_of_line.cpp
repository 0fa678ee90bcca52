// std::vector<record> grown by push_back inside the differentiated function, with libstdc++'s
// relocation kept out of line (-fno-inline): std::__relocate_a_1<Osc, Osc>(Osc*, Osc*, Osc*,
// allocator&) moves the records with one memmove of a run-time length; its C++ signature says
// they are Osc records (refused before: "cannot deduce the type of the memory being copied").
#include <cstdio>
#include <vector>
extern "C" {
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
}
struct Osc { double m, c, k; };
struct Entry { int row; short col; bool keep; float w; double v; };

static double energy(const double *p, int n) {
  std::vector<Osc> osc;
  for (int i = 0; i < n; ++i) osc.push_back({p[3 * i], p[3 * i + 1], p[3 * i + 2]});
  double s = 0;
  for (const Osc &o : osc) s += o.m * o.c * o.k;
  return s;
}

static double assemble(const double *v, int n) {
  std::vector<Entry> es;
  for (int i = 0; i < n; ++i) es.push_back({i, (short)(i % 3), i % 2 == 0, (float)(i + 1), v[i]});
  double s = 0;
  for (const Entry &e : es)
    if (e.keep) s += e.w * e.v * e.v + e.row * e.v;
  return s;
}

int main() {
  double p[9] = {1, 2, 3, 4, 5, 6, 0.5, -1, 2}, dp[9] = {0};
  __enzyme_autodiff((void *)energy, enzyme_dup, p, dp, enzyme_const, 3);
  for (int i = 0; i < 3; ++i)
    std::printf("osc %g %g %g | %g %g %g\n", dp[3 * i], dp[3 * i + 1], dp[3 * i + 2],
                p[3 * i + 1] * p[3 * i + 2], p[3 * i] * p[3 * i + 2], p[3 * i] * p[3 * i + 1]);
  double v[5] = {0.5, 1.5, -2.0, 3.0, 0.25}, dv[5] = {0};
  __enzyme_autodiff((void *)assemble, enzyme_dup, v, dv, enzyme_const, 5);
  for (int i = 0; i < 5; ++i)      // kept when i is even: d/dv (w v^2 + i v) = 2 (i + 1) v + i
    std::printf("entry %g | %g\n", dv[i], i % 2 == 0 ? 2.0 * (i + 1) * v[i] + i : 0.0);
  return 0;
}
