// Assembly-style accumulation into a std::unordered_map<long, float>, copied into a
// std::vector<std::pair<long, float>>, sorted by key with std::sort, then a rank-weighted sum of
// the values. At -Os the sort's heap helper takes the pair's long and float as two arguments,
// and the vector's end pointer (a run-time offset into records of a long and a float) was
// hinted as "all floats", so the long key passed on was taken for a float's bits: refused
// ("an integer argument carries float data").
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>
#include <utility>
#include <vector>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = std::fabs(got - want) <= 1e-5 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.9g %.9g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern "C" {
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
float __enzyme_fwddiff(void *, ...);
}

static float weighted(const float *v, const long *key, int n) {
  std::unordered_map<long, float> acc;
  for (int i = 0; i < n; i++) acc[key[i]] += v[i];
  std::vector<std::pair<long, float>> t(acc.begin(), acc.end());
  std::sort(t.begin(), t.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
  float s = 0;
  for (size_t i = 0; i < t.size(); i++) s += (i + 1) * t[i].second * t[i].second;
  return s;
}

int main() {
  const int n = 12;
  float v[n], dv[n] = {0};
  long key[n];
  for (int i = 0; i < n; i++) { v[i] = 0.1f * i - 0.4f; key[i] = (5 * i + 3) % 7; }
  __enzyme_autodiff((void *)weighted, enzyme_dup, v, dv, enzyme_const, key, enzyme_const, n);
  // keys 0..6 each present; the sum for key k is S_k, its rank k + 1: d/dv_i = 2 (k_i + 1) S_k_i
  double sum[7] = {0};
  for (int i = 0; i < n; i++) sum[key[i]] += v[i];
  for (int i = 0; i < n; i++) {
    char name[16];
    std::snprintf(name, sizeof name, "dv[%d]", i);
    check(name, dv[i], 2.0 * (key[i] + 1) * sum[key[i]]);
  }
  float w[n];
  double dot = 0;
  for (int i = 0; i < n; i++) { w[i] = std::cos(1.0f + i); dot += w[i] * dv[i]; }
  check("fwd.rev", __enzyme_fwddiff((void *)weighted, enzyme_dup, v, w, enzyme_const, key,
                                    enzyme_const, n), dot);
  return failed != 0;
}
