// C++ loops annotated for checkpointing: [[enzyme::checkpoint(...)]] and
// [[enzyme::checkpointing_enable(...)]] in a function template, the state in an object on the
// stack (its member array), a std::vector (extent from __enzyme_ptr_size_hint) and a carried
// scalar, the step calling a lambda. Gradients must equal the unannotated loop's (1e-12) and
// central differences; the primal must be the same; forward mode matches reverse mode.
#include <enzyme/checkpoint.h>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

extern "C" double __enzyme_autodiff(void *, ...);
extern "C" void __enzyme_ptr_size_hint(void *, long) noexcept;
extern "C" double __enzyme_fwddiff(void *, ...);
extern int enzyme_dup, enzyme_const, enzyme_out;

static int failed;
static void check(const char *name, double got, double want, double tol) {
  bool ok = std::fabs(got - want) <= tol * (1 + std::fabs(want));
  std::printf("CHECK %s %.17g %.17g%s\n", name, got, want, ok ? "" : "  MISMATCH");
  failed += !ok;
}

struct State {
  double u[3];
  double energy() const { return u[0] * u[0] + 2 * u[1] * u[1] + 3 * u[2] * u[2]; }
};

enum Mode { Plain, Revolve, Periodic };

template <Mode M> __attribute__((noinline)) double simulate(const double *x, double c, long n) {
  State s;
  for (int k = 0; k < 3; k++)
    s.u[k] = x[k];
  std::vector<double> hist(3, 0.1);
  __enzyme_ptr_size_hint(hist.data(), (int64_t)(3 * sizeof(double)));
  double acc = 0;
  auto rate = [c](double a, double b) { return c * std::sin(a) * b; };
  if constexpr (M == Plain) {
    for (long i = 0; i < n; i++) {
      for (int k = 0; k < 3; k++) {
        s.u[k] += 0.05 * rate(s.u[(k + 1) % 3], hist[k]);
        hist[k] = 0.8 * hist[k] + 0.1 * s.u[k];
      }
      acc += 0.01 * s.energy();
    }
  } else if constexpr (M == Revolve) {
    [[enzyme::checkpoint("revolve", 3)]] for (long i = 0; i < n; i++) {
      for (int k = 0; k < 3; k++) {
        s.u[k] += 0.05 * rate(s.u[(k + 1) % 3], hist[k]);
        hist[k] = 0.8 * hist[k] + 0.1 * s.u[k];
      }
      acc += 0.01 * s.energy();
    }
  } else {
    [[enzyme::checkpointing_enable("periodic", 2)]] for (long i = 0; i < n; i++) {
      for (int k = 0; k < 3; k++) {
        s.u[k] += 0.05 * rate(s.u[(k + 1) % 3], hist[k]);
        hist[k] = 0.8 * hist[k] + 0.1 * s.u[k];
      }
      acc += 0.01 * s.energy();
    }
  }
  return acc + s.energy() + hist[0] * hist[2];
}

template <Mode M> static double grad(long n, double *dx) {
  double x[3] = {0.4, -0.3, 0.9};
  std::memset(dx, 0, 3 * sizeof(double));
  return __enzyme_autodiff((void *)simulate<M>, enzyme_dup, x, dx, enzyme_out, 1.3, enzyme_const,
                           n);
}

template <Mode M> static double tangent(long n, const double *v, double tc) {
  double x[3] = {0.4, -0.3, 0.9}, t[3];
  std::memcpy(t, v, sizeof t);
  return __enzyme_fwddiff((void *)simulate<M>, enzyme_dup, x, t, 1.3, tc, enzyme_const, n);
}

template <Mode M> static void compare(const char *tag, long n) {
  char name[96];
  double want[3], got[3];
  double wantc = grad<Plain>(n, want), gotc = grad<M>(n, got);
  double x[3] = {0.4, -0.3, 0.9};
  std::snprintf(name, sizeof name, "%s_n%ld_primal", tag, n);
  check(name, simulate<M>(x, 1.3, n), simulate<Plain>(x, 1.3, n), 1e-14);
  for (int k = 0; k < 3; k++) {
    std::snprintf(name, sizeof name, "%s_n%ld_dx%d", tag, n, k);
    check(name, got[k], want[k], 1e-12);
    double xp[3], xm[3], h = 1e-6;
    std::memcpy(xp, x, sizeof x);
    std::memcpy(xm, x, sizeof x);
    xp[k] += h;
    xm[k] -= h;
    std::snprintf(name, sizeof name, "%s_n%ld_fd_dx%d", tag, n, k);
    check(name, got[k], (simulate<M>(xp, 1.3, n) - simulate<M>(xm, 1.3, n)) / (2 * h), 1e-6);
  }
  std::snprintf(name, sizeof name, "%s_n%ld_dc", tag, n);
  check(name, gotc, wantc, 1e-12);
  double v[3] = {0.2, 0.5, -0.1}, tc = -0.3;
  double dot = v[0] * got[0] + v[1] * got[1] + v[2] * got[2] + tc * gotc;
  std::snprintf(name, sizeof name, "%s_n%ld_forward_dot", tag, n);
  check(name, tangent<M>(n, v, tc), dot, 1e-10);
}

int main() {
  for (long n : {0L, 1L, 2L, 9L, 31L}) {
    compare<Revolve>("revolve", n);
    compare<Periodic>("periodic", n);
  }
  if (failed)
    std::printf("%d failures\n", failed);
  return failed != 0;
}
