// Structs passed by value (larger than 16 bytes: LLVM's `byval`) to functions that are not
// inlined and change their copy: `Vec3 operator-(Vec3 a, const Vec3 &b) { return a -= b; }`
// and an RK4 step `State rk4(State s, ...)` updating its state in place. The derivatives wrote
// those changes into the caller's objects (the user's input overwritten by the gradient call,
// the gradient wrong). Reverse mode against central differences, forward mode against
// reverse, the input checked unchanged after both.
#include <cmath>
#include <cstdio>
static int failed;
static void check(const char *name, double got, double want, double tol) {
  bool ok = std::fabs(got - want) <= tol * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

struct Vec3 {
  double x, y, z;
  Vec3 &operator-=(const Vec3 &b) { x -= b.x; y -= b.y; z -= b.z; return *this; }
  Vec3 &operator*=(double s) { x *= s; y *= s; z *= s; return *this; }
};
__attribute__((noinline)) Vec3 operator-(Vec3 a, const Vec3 &b) { return a -= b; }
__attribute__((noinline)) Vec3 scaled(Vec3 a, double s) { return a *= s; }
__attribute__((noinline)) double dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

struct State { double q[3], p[3]; };
static State deriv(const State &s, double k) {
  State d;
  double r2 = s.q[0] * s.q[0] + s.q[1] * s.q[1] + s.q[2] * s.q[2] + 0.1;
  double r3 = r2 * std::sqrt(r2);
  for (int i = 0; i < 3; i++) {
    d.q[i] = s.p[i];
    d.p[i] = -k * s.q[i] / r3 - 0.01 * s.p[i] * std::exp(-r2);
  }
  return d;
}
// an RK4 step taking its state by value and updating it in place (big: not inlined)
State rk4(State s, double h, double k) {
  State k1 = deriv(s, k), t = s;
  for (int i = 0; i < 3; i++) { t.q[i] = s.q[i] + h / 2 * k1.q[i]; t.p[i] = s.p[i] + h / 2 * k1.p[i]; }
  State k2 = deriv(t, k);
  for (int i = 0; i < 3; i++) { t.q[i] = s.q[i] + h / 2 * k2.q[i]; t.p[i] = s.p[i] + h / 2 * k2.p[i]; }
  State k3 = deriv(t, k);
  for (int i = 0; i < 3; i++) { t.q[i] = s.q[i] + h * k3.q[i]; t.p[i] = s.p[i] + h * k3.p[i]; }
  State k4 = deriv(t, k);
  for (int i = 0; i < 3; i++) {
    s.q[i] += h / 6 * (k1.q[i] + 2 * k2.q[i] + 2 * k3.q[i] + k4.q[i]);
    s.p[i] += h / 6 * (k1.p[i] + 2 * k2.p[i] + 2 * k3.p[i] + k4.p[i]);
  }
  return s;
}

static double kinetic(const State &s, double k) {
  double r = std::sqrt(s.q[0] * s.q[0] + s.q[1] * s.q[1] + s.q[2] * s.q[2] + 0.1);
  return 0.5 * (s.p[0] * s.p[0] + s.p[1] * s.p[1] + s.p[2] * s.p[2]) - k / r;
}
// the user's three points and orbit state, through pointers
double energy(const Vec3 *v, const State *s0) {
  Vec3 d = v[0] - v[1], e = scaled(v[2] - v[0], 0.5);
  double s = dot(d, d) + dot(d, e);
  State a = rk4(*s0, 0.01, 1.0), b = rk4(*s0, 0.02, 1.0);   // two steps from the user's memory
  State c = rk4(b, 0.02, 1.0);
  return s + kinetic(a, 1.0) + kinetic(c, 1.0) + a.q[0] * b.p[1];
}
static double energy_x(const double *x) {
  return energy(reinterpret_cast<const Vec3 *>(x), reinterpret_cast<const State *>(x + 9));
}

int main() {
  const int n = 15;
  double x[n], keep[n], g[n] = {0}, v[n], vg = 0;
  for (int i = 0; i < n; i++) keep[i] = x[i] = i < 9 ? std::sin(0.7 * i + 0.3) : 0.2 + 0.1 * i;
  __enzyme_autodiff((void *)energy, enzyme_dup, x, g, enzyme_dup, x + 9, g + 9);
  double moved = 0;
  for (int i = 0; i < n; i++) moved += std::fabs(x[i] - keep[i]);
  check("input_after_reverse", moved, 0, 0);
  for (int i = 0; i < n; i++) {
    double h = 1e-6, xp[n], xm[n];
    for (int j = 0; j < n; j++) xp[j] = xm[j] = x[j];
    xp[i] += h;
    xm[i] -= h;
    char name[16];
    std::snprintf(name, sizeof name, "g[%d]", i);
    check(name, g[i], (energy_x(xp) - energy_x(xm)) / (2 * h), 1e-6);
    v[i] = std::cos(0.4 * i);
    vg += v[i] * g[i];
  }
  check("fwd", __enzyme_fwddiff((void *)energy, enzyme_dup, x, v, enzyme_dup, x + 9, v + 9), vg,
        1e-9);
  moved = 0;
  for (int i = 0; i < n; i++) moved += std::fabs(x[i] - keep[i]);
  check("input_after_forward", moved, 0, 0);
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
