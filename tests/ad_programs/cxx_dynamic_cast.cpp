// Shapes in a std::vector<Shape *> (objects built from the parameters inside the function),
// with terms only some kinds have, found by dynamic_cast (to a derived class, across a second
// base, and one that fails): `__dynamic_cast` has no bitcode and was refused ("no derivative
// rule"); its result is the object's address plus an offset, whose shadow follows. Reverse
// mode against central differences, forward mode against reverse.
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>
static int failed;
static void check(const char *name, double got, double want, double tol) {
  bool ok = std::fabs(got - want) <= tol * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

struct Shape { virtual ~Shape() = default; virtual double area() const = 0; };
struct Named { virtual ~Named() = default; double weight = 1.0; };
struct Rect : Shape { double w, h; Rect(double a, double b) : w(a), h(b) {}
  double area() const override { return w * h; } };
struct Circle : Named, Shape { double r; explicit Circle(double a) : r(a) { weight = 0.5 * a; }
  double area() const override { return 3.14159265358979 * r * r; } };

double model(const double *x, int n) {
  std::vector<std::unique_ptr<Shape>> shapes;
  for (int i = 0; i + 1 < n; i += 2) {
    if (i % 4 == 0) shapes.push_back(std::make_unique<Rect>(x[i], x[i + 1]));
    else shapes.push_back(std::make_unique<Circle>(x[i] * x[i + 1]));
  }
  double s = 0;
  for (auto &p : shapes) {
    s += std::sin(p->area());
    if (auto *r = dynamic_cast<Rect *>(p.get())) s += r->w * std::exp(-r->h);
    if (auto *c = dynamic_cast<Circle *>(p.get())) s += c->weight * c->r;   // (a second base)
    if (auto *nm = dynamic_cast<Named *>(p.get())) s += 0.1 * nm->weight;   // (a cross cast)
  }
  return s;
}

int main() {
  const int n = 8;
  double x[n], g[n] = {0}, v[n], vg = 0;
  for (int i = 0; i < n; i++) x[i] = 0.4 + 0.15 * i;
  __enzyme_autodiff((void *)model, enzyme_dup, x, g, enzyme_const, n);
  for (int i = 0; i < n; i++) {
    double h = 1e-6, xp[n], xm[n];
    for (int j = 0; j < n; j++) xp[j] = xm[j] = x[j];
    xp[i] += h;
    xm[i] -= h;
    char name[16];
    std::snprintf(name, sizeof name, "g[%d]", i);
    check(name, g[i], (model(xp, n) - model(xm, n)) / (2 * h), 1e-6);
    v[i] = std::cos(1.1 * i);
    vg += v[i] * g[i];
  }
  check("fwd", __enzyme_fwddiff((void *)model, enzyme_dup, x, v, enzyme_const, n), vg, 1e-9);
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
