// An RK4 step taking its State (48 bytes: LLVM's `byval`) by value and updating it in place,
// called three times, twice on the user's memory (LLVM does not inline it: it is big). The
// derivatives wrote the step's changes into the caller's object: the user's state changed by
// the gradient call and the gradient wrong (found by a new-user check). Reverse mode against
// central differences, the input checked unchanged. (Reverse mode only: with a forward-mode
// marker in the program the fault did not show; ad_programs/cxx_byval_structs.cpp has both.)
#include <cmath>
#include <cstdio>
void __enzyme_autodiff(void *, ...);
static int failed;
static void check(const char *name, double got, double want, double tol) {
  bool ok = std::fabs(got - want) <= tol * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
struct State { double q[3], p[3]; };
static State deriv(const State &s, double k) {
  State d;
  double r2 = s.q[0] * s.q[0] + s.q[1] * s.q[1] + s.q[2] * s.q[2] + 0.1;
  double r3 = r2 * std::sqrt(r2);
  for (int i = 0; i < 3; ++i) { d.q[i] = s.p[i]; d.p[i] = -k * s.q[i] / r3 - 0.01 * s.p[i] * std::exp(-r2); }
  return d;
}
// RK4 step: takes the state by value and updates it in place
State rk4(State s, double dt, double k) {
  State k1 = deriv(s, k), t = s;
  for (int i = 0; i < 3; ++i) { t.q[i] = s.q[i] + 0.5 * dt * k1.q[i]; t.p[i] = s.p[i] + 0.5 * dt * k1.p[i]; }
  State k2 = deriv(t, k);
  for (int i = 0; i < 3; ++i) { t.q[i] = s.q[i] + 0.5 * dt * k2.q[i]; t.p[i] = s.p[i] + 0.5 * dt * k2.p[i]; }
  State k3 = deriv(t, k);
  for (int i = 0; i < 3; ++i) { t.q[i] = s.q[i] + dt * k3.q[i]; t.p[i] = s.p[i] + dt * k3.p[i]; }
  State k4 = deriv(t, k);
  for (int i = 0; i < 3; ++i) {
    s.q[i] += dt / 6 * (k1.q[i] + 2 * k2.q[i] + 2 * k3.q[i] + k4.q[i]);
    s.p[i] += dt / 6 * (k1.p[i] + 2 * k2.p[i] + 2 * k3.p[i] + k4.p[i]);
  }
  return s;
}
double energy(const State &s, double k) {
  double r = std::sqrt(s.q[0] * s.q[0] + s.q[1] * s.q[1] + s.q[2] * s.q[2] + 0.1);
  return 0.5 * (s.p[0] * s.p[0] + s.p[1] * s.p[1] + s.p[2] * s.p[2]) - k / r;
}
double f(State *s0) {
  State a = rk4(*s0, 0.01, 1.0);
  State b = rk4(*s0, 0.02, 1.0);  // two step sizes (Richardson-style comparison)
  State c = rk4(b, 0.02, 1.0);
  return energy(a, 1.0) + energy(c, 1.0) + a.q[0] * b.p[1];
}
int main() {
  const State s = {{1, 0.2, 0.1}, {0.1, 0.9, 0.05}};
  State work = s, ds = {};
  double f0 = f(&work);
  __enzyme_autodiff((void *)f, &work, &ds);
  check("f_after_reverse", f(&work), f0, 0);
  double *g = (double *)&ds;
  for (int i = 0; i < 6; ++i) {
    double h = 1e-6;
    State sp = s, sm = s;
    ((double *)&sp)[i] += h;
    ((double *)&sm)[i] -= h;
    char name[16];
    std::snprintf(name, sizeof name, "g[%d]", i);
    check(name, g[i], (f(&sp) - f(&sm)) / (2 * h), 1e-6);
  }

  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
