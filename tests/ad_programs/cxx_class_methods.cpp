// C++ classes: const and non-const member functions, a constructor, a method calling another.
#include <cmath>
#include <cstdio>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
static void checki(const char *name, int i, double got, double want) {
  char buf[64];
  snprintf(buf, sizeof buf, "%s[%d]", name, i);
  check(buf, got, want);
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
extern "C" {
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}
// deterministic pseudo-random direction entries
static double rnd(int k) { return std::sin(1.3 + 7.1 * k); }

class Spring {
 public:
  Spring(double k, double rest) : k_(k), rest_(rest) {}
  double stretch(double x) const { return x - rest_; }
  double energy(double x) const { return 0.5 * k_ * stretch(x) * stretch(x); }
  void scale(double s) { k_ *= s; }
  double k_;
  double rest_;
};

// differentiate through a method call on a constant object
double spring_energy(const Spring *s, double x) { return s->energy(x); }

// the object is built inside the differentiated function from active values
double built_inside(double k, double x) {
  Spring s(k, 1.0);
  s.scale(2.0);
  return s.energy(x);
}

int main() {
  Spring s(3.0, 1.0);
  double x = 1.6;
  check("const_object_dx", __enzyme_autodiff((void *)spring_energy, enzyme_const, &s, x), 3.0 * (x - 1.0));
  Spring ds(0, 0);
  __enzyme_autodiff((void *)spring_energy, enzyme_dup, &s, &ds, enzyme_const, x);
  check("dup_object_dk", ds.k_, 0.5 * (x - 1.0) * (x - 1.0));
  check("dup_object_drest", ds.rest_, -3.0 * (x - 1.0));
  double dk = __enzyme_autodiff((void *)built_inside, 2.0, enzyme_const, x);
  check("built_inside_dk", dk, 2.0 * 0.5 * (x - 1.0) * (x - 1.0));
  // forward/reverse dot test: the tangent along a direction v equals v . gradient
  Spring vs(rnd(0), rnd(1)), gs(0, 0);
  double vx = rnd(2), vk = rnd(3);
  double gx = __enzyme_autodiff((void *)spring_energy, enzyme_dup, &s, &gs, x);
  check("dot_spring_energy", __enzyme_fwddiff((void *)spring_energy, enzyme_dup, &s, &vs, x, vx),
        vs.k_ * gs.k_ + vs.rest_ * gs.rest_ + vx * gx);
  check("dot_built_inside", __enzyme_fwddiff((void *)built_inside, 2.0, vk, enzyme_const, x), vk * dk);
  return report();
}
