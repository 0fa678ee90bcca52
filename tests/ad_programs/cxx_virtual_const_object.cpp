// A virtual call on an enzyme_const object, whose dynamic type is chosen at run time (no
// devirtualization). In the unoptimized pipeline (-O2-ref) the object pointer is spilled to a
// local slot and reloaded for the call; the reload was given a shadow (read from the slot's,
// which held the const argument's null), so the targets' derivatives added into this->a
// through a null pointer (a crash).
#include <cmath>
#include <cstdio>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-9 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern "C" {
int enzyme_dup, enzyme_const, enzyme_out;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}

struct Model {
  virtual double eval(const double *x) const = 0;
  virtual ~Model() {}
};
struct Quadratic : Model {
  double a;
  explicit Quadratic(double a) : a(a) {}
  double eval(const double *x) const override { return a * x[0] * x[0] + x[1]; }
};
struct Linear : Model {
  double b = 3.0;
  double eval(const double *x) const override { return b * x[0] - x[1] * x[1]; }
};

double objective(const Model *m, const double *x) { return m->eval(x) + x[0] * x[1]; }

int main(int argc, char **argv) {
  (void)argv;
  Quadratic q(2.0);
  Linear l;
  const Model *m1 = argc > 5 ? (const Model *)&l : (const Model *)&q;
  const Model *m2 = argc > 5 ? (const Model *)&q : (const Model *)&l;
  double x[2] = {1.5, -0.5}, dx1[2] = {0, 0}, dx2[2] = {0, 0};
  __enzyme_autodiff((void *)objective, enzyme_const, m1, enzyme_dup, x, dx1);
  __enzyme_autodiff((void *)objective, enzyme_const, m2, enzyme_dup, x, dx2);
  check("quadratic_dx0", dx1[0], 2 * 2.0 * x[0] + x[1]);
  check("quadratic_dx1", dx1[1], 1 + x[0]);
  check("linear_dx0", dx2[0], 3.0 + x[1]);
  check("linear_dx1", dx2[1], -2 * x[1] + x[0]);
  // forward/reverse dot test along v
  double v[2] = {0.7, -1.3};
  check("dot_quadratic", __enzyme_fwddiff((void *)objective, enzyme_const, m1, enzyme_dup, x, v),
        v[0] * dx1[0] + v[1] * dx1[1]);
  check("dot_linear", __enzyme_fwddiff((void *)objective, enzyme_const, m2, enzyme_dup, x, v),
        v[0] * dx2[0] + v[1] * dx2[1]);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
