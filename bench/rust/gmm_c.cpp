// The C++ side of bench/rust_gmm.py: bench/src/gmm.h's objective (T = double) on the data the
// Rust port generates (the same generator), timed the same way.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>
#include "../src/gmm.h"

extern "C" {
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
}

static double lcg(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*s >> 11) / (double)(1ULL << 53);
}

__attribute__((noinline)) static void objective(int d, int k, int n, const double *alphas,
                                                const double *means, const double *icf,
                                                const double *x, double *err) {
  gmm_objective<double>(d, k, n, alphas, means, icf, x, 1.0, 0, err);
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char **argv) {
  int d = atoi(argv[1]), k = atoi(argv[2]), n = atoi(argv[3]), reps = atoi(argv[4]);
  int icf_sz = d * (d + 1) / 2;
  uint64_t s = 42;
  std::vector<double> alphas(k), means(k * d), icf(k * icf_sz), x(n * d);
  for (auto &v : alphas) v = lcg(&s) - 0.5;
  for (auto &v : means) v = lcg(&s) * 2 - 1;
  for (auto &v : icf) v = lcg(&s) * 0.2 - 0.1;
  for (auto &v : x) v = lcg(&s) * 2 - 1;
  double e = 0;
  std::vector<double> tp, tg;
  for (int r = 0; r < reps; r++) {
    auto t = std::chrono::steady_clock::now();
    objective(d, k, n, alphas.data(), means.data(), icf.data(), x.data(), &e);
    tp.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count());
  }
  std::vector<double> da(k), dm(k * d), di(k * icf_sz);
  for (int r = 0; r < reps; r++) {
    std::fill(da.begin(), da.end(), 0.0);
    std::fill(dm.begin(), dm.end(), 0.0);
    std::fill(di.begin(), di.end(), 0.0);
    double err = 0, derr = 1;
    auto t = std::chrono::steady_clock::now();
    __enzyme_autodiff((void *)objective, enzyme_const, d, enzyme_const, k, enzyme_const, n,
                      enzyme_dup, alphas.data(), da.data(), enzyme_dup, means.data(), dm.data(),
                      enzyme_dup, icf.data(), di.data(), enzyme_const, x.data(), enzyme_dup,
                      &err, &derr);
    tg.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count());
  }
  double norm = 0;
  for (double v : da) norm += v * v;
  for (double v : dm) norm += v * v;
  for (double v : di) norm += v * v;
  printf("objective %.15e\n", e);
  printf("gradient norm %.15e first %.15e last %.15e\n", sqrt(norm), da[0], di[k * icf_sz - 1]);
  double p = median(tp), g = median(tg);
  printf("primal %.6e s gradient %.6e s ratio %.2f\n", p, g, g / p);
  return 0;
}
