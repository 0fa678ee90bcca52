// Small records that hold a float beside integer data travel in one 64-bit integer register
// (x86-64): `struct { float dist; int idx; }` (the float in the low half), `struct { int idx;
// float weight; }` (the high half), `std::pair<float, int>`, `std::optional<float>`, returned by
// value, passed by value (also read from an array of them, as unoptimized builds do) and stored
// to memory as the i64. The derivative follows the float
// through the packing (enzyme_cc/ad/structure/packed_bits.py); it was refused ("returns a float's bits
// packed with other data"). Each line: enzyme-cc | analytic.
#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>
extern "C" {
double __enzyme_autodiff(void *, ...);
float __enzyme_fwddiff(void *, ...);
}
extern int enzyme_dup, enzyme_const;

struct Near { float dist; int idx; };
struct Tagged { int idx; float weight; };

__attribute__((noinline)) static Near nearest(const float *p, int n, float q) {
  Near r = {INFINITY, -1};
  for (int i = 0; i < n; i++) {
    float d = (p[i] - q) * (p[i] - q);
    if (d < r.dist) { r.dist = d; r.idx = i; }
  }
  return r;
}
__attribute__((noinline)) static Tagged heaviest(const float *p, int n) {
  Tagged t = {0, p[0] * p[0]};
  for (int i = 1; i < n; i++)
    if (p[i] * p[i] > t.weight) { t.weight = p[i] * p[i]; t.idx = i; }
  return t;
}
__attribute__((noinline)) static float weigh(Near r) { return r.dist * (r.idx + 1); }
__attribute__((noinline)) static std::pair<float, int> best(const float *p, int n) {
  std::pair<float, int> b{-1e30f, -1};
  for (int i = 0; i < n; i++) {
    float v = std::sin(p[i]) * p[i];
    if (v > b.first) b = {v, i};
  }
  return b;
}
__attribute__((noinline)) static std::optional<float> root(float x) {
  if (x < 0) return std::nullopt;
  return std::sqrt(x);
}

float objective(const float *p, int n, Tagged *kept) {
  float s = 0;
  for (int k = 0; k < 3; k++) s += weigh(nearest(p, n, 0.3f * k));
  kept[0] = heaviest(p, n);
  kept[1] = heaviest(p + 1, n - 1);
  s += std::sqrt(kept[0].weight) * (kept[0].idx + 2) + kept[1].weight;
  auto [v, i] = best(p, n);
  s += v * (i + 1);
  for (int k = 0; k < n; k++) {
    std::optional<float> r = root(p[k] - 0.2f);
    s += r ? *r * *r * *r : 0.5f;
  }
  return s;
}

// records built in memory and passed by value from there: unoptimized code reads each as one
// i64 (its integer field a float lane with a zero shadow) and hands it to the callee
__attribute__((noinline)) static float lean(Tagged t) { return t.weight * (t.idx + 0.5f); }
__attribute__((noinline)) static Near make(const float *p, int i, int n) {
  return Near{p[i] * p[i] * p[i], n - 1 - i};
}
float from_memory(const float *p, int n) {
  Near near[4], made[4];
  Tagged tagged[4];
  const float w[4] = {1.5f, 2.5f, 3.5f, 4.5f};
  for (int k = 0; k < n; k++) {
    near[k].dist = p[k] * p[k];
    near[k].idx = k;
    tagged[k].idx = n - k;
    tagged[k].weight = std::sin(p[k]);
    made[k] = make(p, k, n);        // the record's integer half is not a float: it indexes w
  }
  float s = 0;
  for (int k = 0; k < n; k++) s += weigh(near[k]) + lean(tagged[k]) + made[k].dist * w[made[k].idx];
  return s;
}

// the same derivative written out, for the branches these inputs take
static void analytic(const float *p, int n, double *g) {
  for (int k = 0; k < n; k++) g[k] = 0;
  for (int k = 0; k < 3; k++) {
    Near r = nearest(p, n, 0.3f * k);
    g[r.idx] += 2.0 * (p[r.idx] - 0.3f * k) * (r.idx + 1);
  }
  Tagged t0 = heaviest(p, n), t1 = heaviest(p + 1, n - 1);
  g[t0.idx] += (p[t0.idx] > 0 ? 1 : -1) * (t0.idx + 2.0);
  g[1 + t1.idx] += 2.0 * p[1 + t1.idx];
  std::pair<float, int> b = best(p, n);
  g[b.second] += (std::sin((double)p[b.second]) + p[b.second] * std::cos((double)p[b.second])) *
                 (b.second + 1);
  for (int k = 0; k < n; k++)
    if (p[k] - 0.2f >= 0) g[k] += 1.5 * std::sqrt((double)p[k] - 0.2f);
}

int main() {
  float p[4] = {0.1f, 0.45f, 0.9f, -0.2f}, dp[4] = {0};
  Tagged kept[2], dkept[2] = {};
  double want[4];
  analytic(p, 4, want);
  __enzyme_autodiff((void *)objective, enzyme_dup, p, dp, enzyme_const, 4, enzyme_dup, kept,
                    dkept);
  for (int k = 0; k < 4; k++) {
    float tp[4] = {0};
    tp[k] = 1;
    Tagged tkept[2] = {};
    float fwd = __enzyme_fwddiff((void *)objective, enzyme_dup, p, tp, enzyme_const, 4,
                                 enzyme_dup, kept, tkept);
    std::printf("reverse dp[%d]: %.7g | %.7g\n", k, dp[k], want[k]);
    std::printf("forward dp[%d]: %.7g | %.7g\n", k, fwd, want[k]);
  }
  float dm[4] = {0};
  __enzyme_autodiff((void *)from_memory, enzyme_dup, p, dm, enzyme_const, 4);
  for (int k = 0; k < 4; k++) {
    float tp[4] = {0};
    tp[k] = 1;
    float fwd = __enzyme_fwddiff((void *)from_memory, enzyme_dup, p, tp, enzyme_const, 4);
    const double wk[4] = {1.5, 2.5, 3.5, 4.5};
    double w = 2.0 * p[k] * (k + 1) + std::cos((double)p[k]) * (4 - k + 0.5) +
               3.0 * p[k] * p[k] * wk[3 - k];
    std::printf("from memory, reverse dp[%d]: %.7g | %.7g\n", k, dm[k], w);
    std::printf("from memory, forward dp[%d]: %.7g | %.7g\n", k, fwd, w);
  }
  return 0;
}
