// C++: a checkpointed time loop over a std::vector's data, the step a static member function;
// checkpointed gradients (every scheme) against the plain loop's and central differences.
#include <enzyme/checkpoint.h>
#include <cmath>
#include <cstdio>
#include <vector>

extern "C" double __enzyme_autodiff(void *, ...);
extern int enzyme_dup, enzyme_const;
static int failures;

static void check(const char *name, double got, double want, double tol) {
  bool ok = std::fabs(got - want) <= tol * (1 + std::fabs(want));
  std::printf("CHECK %s %.17g %.17g%s\n", name, got, want, ok ? "" : "  MISMATCH");
  failures += !ok;
}

struct Params { double dt, nu; };

struct Heat {
  // one explicit Euler step of a nonlinear diffusion on a ring
  __attribute__((noinline)) static void step(int64_t, double *u, int64_t n, const Params *p) {
    std::vector<double> t(u, u + n);
    for (int64_t k = 0; k < n; k++) {
      double l = t[(k + n - 1) % n], r = t[(k + 1) % n];
      u[k] = t[k] + p->dt * (p->nu * (l - 2 * t[k] + r) - std::tanh(t[k]));
    }
  }
};

static double energy(const double *u, int64_t n) {
  double s = 0;
  for (int64_t k = 0; k < n; k++) s += u[k] * u[k];
  return s;
}

static double plain(const double *x, int64_t n, int64_t steps, const Params *p) {
  std::vector<double> u(x, x + n);
  for (int64_t i = 0; i < steps; i++) Heat::step(i, u.data(), n, p);
  return energy(u.data(), n);
}

static double ckpt(const double *x, int64_t n, int64_t steps, const Params *p,
                   const EnzymeCheckpointScheme *s, EnzymeCkptConfig *cfg) {
  std::vector<double> u(x, x + n);
  __enzyme_checkpoint_for((void *)Heat::step, 0, steps, enzyme_scheme, s, cfg,
                          enzyme_checkpoint_region, u.data(), (int64_t)(n * sizeof(double)),
                          u.data(), n, p);
  return energy(u.data(), n);
}

int main() {
  const int64_t n = 6;
  Params p{0.05, 0.8};
  const EnzymeCheckpointScheme *schemes[] = {&EnzymeCkptRevolve, &EnzymeCkptPeriodic,
                                             &EnzymeCkptStoreAll};
  const char *names[] = {"revolve", "periodic", "store_all"};
  char name[96];
  for (int64_t steps : {1, 11, 24}) {
    std::vector<double> x(n), dx(n, 0.0);
    for (int64_t k = 0; k < n; k++) x[k] = std::sin(0.7 * k) + 0.5;
    __enzyme_autodiff((void *)plain, enzyme_dup, x.data(), dx.data(), enzyme_const, n,
                      enzyme_const, steps, enzyme_const, &p);
    std::vector<double> xp = x, xm = x;
    xp[2] += 1e-6;
    xm[2] -= 1e-6;
    std::snprintf(name, sizeof name, "cxx_fd_n%lld", (long long)steps);
    check(name, dx[2], (plain(xp.data(), n, steps, &p) - plain(xm.data(), n, steps, &p)) / 2e-6, 1e-6);
    for (int s = 0; s < 3; s++)
      for (int64_t snaps : {1, 3}) {
        std::vector<double> dy(n, 0.0);
        EnzymeCkptConfig cfg = {snaps, 0, nullptr, 0, nullptr};
        __enzyme_autodiff((void *)ckpt, enzyme_dup, x.data(), dy.data(), enzyme_const, n,
                          enzyme_const, steps, enzyme_const, &p, enzyme_const, schemes[s],
                          enzyme_const, &cfg);
        for (int64_t k = 0; k < n; k++) {
          std::snprintf(name, sizeof name, "cxx_%s_n%lld_k%lld_dx%lld", names[s], (long long)steps,
                        (long long)snaps, (long long)k);
          check(name, dy[k], dx[k], 1e-12);
        }
      }
  }
  std::printf("%d failures\n", failures);
  return failures != 0;
}
