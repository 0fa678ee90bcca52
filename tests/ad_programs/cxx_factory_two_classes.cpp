// An object of one of two classes, chosen at run time, constructed inside the differentiated
// function: LLVM merges the two constructors' vtable stores into one store of a select (or
// phi) of the two vtable addresses, which was refused ("joins shadowed and unshadowed
// memory"). energy = sum_e m->energy(F_e) with Linear: lam/2 a^2 + mu b and Quartic:
// lam a^4 + mu b^2; gradient w.r.t. lam, mu (active by value) and F (dup).
#include <cmath>
#include <cstdio>
static int failed;
static void check(const char *name, double got, double want) {
  bool ok = std::fabs(got - want) <= 1e-9 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
struct Grad2 { double dlam, dmu; };
extern int enzyme_dup, enzyme_const;
Grad2 __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

struct Material {
  virtual ~Material() = default;
  virtual double energy(const double *F) const = 0;
};
struct Linear : Material {
  double lam, mu;
  Linear(double l, double m) : lam(l), mu(m) {}
  double energy(const double *F) const override { return 0.5 * lam * F[0] * F[0] + mu * F[1]; }
};
struct Quartic : Material {
  double lam, mu;
  Quartic(double l, double m) : lam(l), mu(m) {}
  double energy(const double *F) const override {
    return lam * F[0] * F[0] * F[0] * F[0] + mu * F[1] * F[1];
  }
};

Material *make(int type, double lam, double mu) {
  if (type == 0) return new Linear(lam, mu);
  return new Quartic(lam, mu);
}

double total(double lam, double mu, int type, const double *F, int n) {
  Material *m = make(type, lam, mu);
  double s = 0;
  for (int e = 0; e < n; ++e) s += m->energy(F + 2 * e);
  delete m;
  return s;
}

int main() {
  const double F[4] = {0.5, 0.7, -1.2, 0.3};
  const double lam = 2.0, mu = 3.0;
  for (int type = 0; type < 2; ++type) {
    double dF[4] = {0};
    Grad2 g = __enzyme_autodiff((void *)total, lam, mu, enzyme_const, type, enzyme_dup, F, dF,
                                enzyme_const, 2);
    double wl = 0, wm = 0, wF[4];
    for (int e = 0; e < 2; ++e) {
      double a = F[2 * e], b = F[2 * e + 1];
      wl += type == 0 ? 0.5 * a * a : a * a * a * a;
      wm += type == 0 ? b : b * b;
      wF[2 * e] = type == 0 ? lam * a : 4 * lam * a * a * a;
      wF[2 * e + 1] = type == 0 ? mu : 2 * mu * b;
    }
    char name[32];
    std::snprintf(name, sizeof name, "type%d.dlam", type);
    check(name, g.dlam, wl);
    std::snprintf(name, sizeof name, "type%d.dmu", type);
    check(name, g.dmu, wm);
    double v[4], vdF = 0;
    for (int k = 0; k < 4; ++k) {
      std::snprintf(name, sizeof name, "type%d.dF[%d]", type, k);
      check(name, dF[k], wF[k]);
      v[k] = std::sin(1.3 + 7.1 * k);
      vdF += v[k] * dF[k];
    }
    // forward along (lam, mu, F) = (0.5, -0.25, v) against the reverse gradient
    double t = __enzyme_fwddiff((void *)total, lam, 0.5, mu, -0.25, enzyme_const, type,
                                enzyme_dup, F, v, enzyme_const, 2);
    check(type ? "dot.quartic" : "dot.linear", t, 0.5 * g.dlam - 0.25 * g.dmu + vdF);
  }
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
