/* Records of mixed fields copied every way C++ copies them: a derived class (base + float +
   array + pointer) by assignment, by std::swap and by std::sort's moves in a std::vector; the
   base slice copied out of it; a record with a pointer into the input pushed into a std::vector
   (its growth moves the records; the first insertion computes `begin + 1` of an empty vector,
   the constant address `inttoptr (i64 48 to ptr)`) and erased from its front; a union with a
   double member copied by memcpy. Reverse mode against central differences, forward against
   reverse. */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>
static int failed;
static void check(const char *name, int i, double got, double want, double tol) {
  int ok = std::fabs(got - want) <= tol * (1.0 + std::fabs(want));
  std::printf("CHECK %s[%d] %.12g %.12g%s\n", name, i, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern "C" {
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}
union U { double d; long bits; };
struct Base { double m; int tag; };
struct Derived : Base { float w; double v[2]; Derived *next; };
struct Rec { double a; int k; const double *p; float w; double v[2]; };

__attribute__((noinline)) double f(const double *x, int n) {
  std::vector<Derived> ds(n);
  for (int i = 0; i < n; i++) {
    ds[i].m = x[i];
    ds[i].tag = i;
    ds[i].w = (float)(0.5 * x[i]);
    ds[i].v[0] = x[i] * x[i];
    ds[i].v[1] = 1.0;
    ds[i].next = i ? &ds[i - 1] : nullptr;
  }
  Derived t = ds[0];
  ds[0] = ds[n - 1];
  ds[n - 1] = t;
  std::swap(ds[1], ds[2]);
  std::sort(ds.begin(), ds.end(), [](const Derived &a, const Derived &b) { return a.tag < b.tag; });
  std::vector<Rec> rs;
  for (int i = 0; i < n; i++) rs.push_back(Rec{x[i], i, &x[i], (float)x[i], {x[i], 2 * x[i]}});
  rs.erase(rs.begin());
  U u[4], uu[4];
  for (int i = 0; i < 4; i++) u[i].d = x[i] * 3;
  std::memcpy(uu, u, sizeof u);
  Base b = ds[2];
  double s = b.m * 0.5;
  /* (the float fields weigh little: their rounding would swamp the central differences) */
  for (int i = 0; i < n; i++) s += ds[i].m * ds[i].v[0] + 1e-3 * ds[i].w;
  for (auto &r : rs) s += r.a * r.p[0] + r.v[1] * 1e-3 * r.w;
  for (int i = 0; i < 4; i++) s += uu[i].d * uu[i].d;
  return s;
}

int main() {
  const int n = 5;
  double x[n] = {0.3, -0.5, 0.8, 0.1, 0.7}, dx[n] = {0}, v[n], vd = 0;
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, n);
  for (int i = 0; i < n; i++) {
    double h = 1e-5, s = x[i];
    x[i] = s + h;
    double a = f(x, n);
    x[i] = s - h;
    double b = f(x, n);
    x[i] = s;
    check("dx", i, dx[i], (a - b) / (2 * h), 1e-6);
    v[i] = std::sin(i + 1.0);
    vd += v[i] * dx[i];
  }
  double t = __enzyme_fwddiff((void *)f, enzyme_dup, x, v, enzyme_const, n);
  check("dot", 0, t, vd, 1e-10);
  return failed != 0;
}
