// Shadow objects of classes with virtual methods: the program gives the shadow object the
// shadow vtable from __enzyme_virtualreverse (Enzyme's API), and a struct holding a function
// pointer gets __enzyme_virtualreverse(fn) as its shadow; the active member's adjoint must come
// out for two derived classes (analytic and central differences), and forward mode must agree
// with reverse mode (dot-product test).
#include <cmath>
#include <cstdio>
static int failed;
static void check(const char *name, double got, double want, double rtol) {
  int ok = fabs(got - want) <= rtol * (1.0 + fabs(want));
  printf("CHECK %s %.15g %.15g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern "C" {
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}
template <typename T> T __enzyme_virtualreverse(T);

struct Law {
  virtual double flux(double u) = 0;
  virtual ~Law() {}
  double c;
};
struct Linear : Law {
  double flux(double u) { return c * u; }
};
struct Burgers : Law {
  double flux(double u) { return 0.5 * c * u * u + sin(c * u); }
};
__attribute__((noinline)) double sum_flux(Law &law, const double *u, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += law.flux(u[i]);
  return s;
}

struct Step {
  double (*rate)(double);
  double h;
};
static double decay(double y) { return -0.3 * y * y; }
double advance(Step *st, double y) { return y + st->h * st->rate(y); }

template <class L> static void run(const char *tag, double c) {
  double u[3] = {0.4, -1.1, 2.0}, du[3] = {0};
  Law *law = new L();
  law->c = c;
  Law *dlaw = new L();
  *(void **)dlaw = __enzyme_virtualreverse(*(void **)dlaw);
  dlaw->c = 0;
  __enzyme_autodiff((void *)sum_flux, enzyme_dup, law, dlaw, enzyme_dup, u, du,
                               enzyme_const, 3);
  const double h = 1e-6;
  char name[48];
  law->c = c + h;
  double up = sum_flux(*law, u, 3);
  law->c = c - h;
  double dn = sum_flux(*law, u, 3);
  law->c = c;
  snprintf(name, sizeof name, "%s_dc", tag);
  check(name, dlaw->c, (up - dn) / (2 * h), 1e-6);
  for (int i = 0; i < 3; i++) {
    double keep = u[i];
    u[i] = keep + h;
    up = sum_flux(*law, u, 3);
    u[i] = keep - h;
    dn = sum_flux(*law, u, 3);
    u[i] = keep;
    snprintf(name, sizeof name, "%s_du%d", tag, i);
    check(name, du[i], (up - dn) / (2 * h), 1e-6);
  }
  // forward mode with the same shadow object: <J v, 1> == <v, J^T 1>
  Law *tlaw = new L();
  *(void **)tlaw = __enzyme_virtualreverse(*(void **)tlaw);
  tlaw->c = 0.7;
  double tu[3] = {0.2, -0.5, 1.3};
  double jv = __enzyme_fwddiff((void *)sum_flux, enzyme_dup, law, tlaw, enzyme_dup, u, tu,
                               enzyme_const, 3);
  double vjt = 0.7 * dlaw->c + tu[0] * du[0] + tu[1] * du[1] + tu[2] * du[2];
  snprintf(name, sizeof name, "%s_dot", tag);
  check(name, jv, vjt, 1e-12);
  delete law;
  delete dlaw;
  delete tlaw;
}

int main() {
  run<Linear>("linear", 1.5);
  run<Burgers>("burgers", 0.8);
  Step st = {decay, 0.1}, dst = {__enzyme_virtualreverse(decay), 0.0};
  double dy = __enzyme_autodiff((void *)advance, enzyme_dup, &st, &dst, 2.0);
  check("fnptr_dy", dy, 1 + 0.1 * -0.6 * 2.0, 1e-14);
  check("fnptr_dh", dst.h, decay(2.0), 1e-14);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
