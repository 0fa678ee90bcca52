// Virtual functions: a call through the vtable of an object passed in (constant), and objects
// of two derived classes created inside the differentiated function.
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
/* vector forward mode: lane k (entry i >= 0) of a width-N call versus a width-1 call */
static void checkv(const char *name, int lane, int i, double got, double want) {
  char buf[64];
  if (i < 0) snprintf(buf, sizeof buf, "vec_%s_%d", name, lane);
  else snprintf(buf, sizeof buf, "vec_%s_%d_%d", name, lane, i);
  check(buf, got, want);
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
extern "C" {
int enzyme_dup, enzyme_const, enzyme_width;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}
struct V2 { double d[2]; };
V2 __enzyme_fwddiff2(void *, ...) __asm__("__enzyme_fwddiff");

struct Shape {
  virtual ~Shape() {}
  virtual double area(double s) const = 0;
};
struct Square : Shape {
  double area(double s) const override { return s * s; }
};
struct Circle : Shape {
  double area(double r) const override { return 3.0 * r * r * r / r + std::sin(r); }
};

__attribute__((noinline)) double through_vtable(const Shape *sh, double x) { return sh->area(x) * x; }

double built_inside(double x, int kind) {
  Square sq;
  Circle ci;
  const Shape *sh = kind ? static_cast<const Shape *>(&ci) : &sq;
  return through_vtable(sh, x);
}

int main() {
  Square sq;
  Circle ci;
  double x = 0.8;
  check("vtable_square", __enzyme_autodiff((void *)through_vtable, enzyme_const, (const Shape *)&sq, x), 3 * x * x);
  check("vtable_circle", __enzyme_autodiff((void *)through_vtable, enzyme_const, (const Shape *)&ci, x),
        9 * x * x + std::sin(x) + x * std::cos(x));
  check("inside_square", __enzyme_autodiff((void *)built_inside, x, enzyme_const, 0), 3 * x * x);
  check("inside_circle", __enzyme_autodiff((void *)built_inside, x, enzyme_const, 1),
        9 * x * x + std::sin(x) + x * std::cos(x));
  // forward/reverse dot test: the tangent along a direction v equals v * derivative
  const double v = std::sin(1.3);
  check("dot_vtable_circle", __enzyme_fwddiff((void *)through_vtable, enzyme_const, (const Shape *)&ci, x, v),
        v * __enzyme_autodiff((void *)through_vtable, enzyme_const, (const Shape *)&ci, x));
  check("dot_inside_square", __enzyme_fwddiff((void *)built_inside, x, v, enzyme_const, 0),
        v * __enzyme_autodiff((void *)built_inside, x, enzyme_const, 0));
  check("dot_inside_circle", __enzyme_fwddiff((void *)built_inside, x, v, enzyme_const, 1),
        v * __enzyme_autodiff((void *)built_inside, x, enzyme_const, 1));
  // vector forward mode: 2 tangents of x in one call versus 2 width-1 calls
  const double v2[2] = {std::sin(8.4), std::sin(15.5)};
  V2 t = __enzyme_fwddiff2((void *)through_vtable, enzyme_width, 2, enzyme_const, (const Shape *)&ci, x, v2[0], v2[1]);
  for (int k = 0; k < 2; k++)
    checkv("vtable_circle", k, -1, t.d[k], __enzyme_fwddiff((void *)through_vtable, enzyme_const, (const Shape *)&ci, x, v2[k]));
  for (int kind = 0; kind < 2; kind++) {
    t = __enzyme_fwddiff2((void *)built_inside, enzyme_width, 2, x, v2[0], v2[1], enzyme_const, kind);
    for (int k = 0; k < 2; k++)
      checkv(kind ? "inside_circle" : "inside_square", k, -1, t.d[k],
             __enzyme_fwddiff((void *)built_inside, x, v2[k], enzyme_const, kind));
  }
  return report();
}
