// A std::vector of records holding a std::string beside doubles, filled by push_back in a loop:
// when the vector grows, libstdc++ moves each string's characters with a memcpy of a run-time
// length from one element's small buffer to the other's (the record's double field just
// after it). Both ends are what a `char *` points to: character data, no derivative. It was
// refused ("cannot deduce the type of the memory being copied").
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = std::fabs(got - want) <= 1e-9 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern "C" {
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}

struct Particle {
  std::string name;
  double mass, x;
};

// sum over particles of m_i x_i^2, the ones named "heavy..." counted twice
double energy(const double *x, int n) {
  std::vector<Particle> ps;
  for (int i = 0; i < n; i++)
    ps.push_back({i % 2 ? "heavy particle" : "light", 1.0 + i, x[i]});
  double e = 0;
  for (const Particle &p : ps)
    e += (p.name.compare(0, 5, "heavy") == 0 ? 2.0 : 1.0) * p.mass * p.x * p.x;
  return e;
}

int main() {
  const int n = 5;
  double x[n] = {0.3, -1.2, 0.8, 2.0, -0.5}, dx[n] = {0};
  __enzyme_autodiff((void *)energy, enzyme_dup, x, dx, enzyme_const, n);
  for (int i = 0; i < n; i++) {
    char name[16];
    std::snprintf(name, sizeof name, "dx[%d]", i);
    check(name, dx[i], (i % 2 ? 2.0 : 1.0) * (1.0 + i) * 2 * x[i]);
  }
  double v[n] = {0.5, 1.0, -0.3, 0.2, 0.9}, vdx = 0;
  for (int i = 0; i < n; i++) vdx += v[i] * dx[i];
  check("dot_energy", __enzyme_fwddiff((void *)energy, enzyme_dup, x, v, enzyme_const, n), vdx);
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
