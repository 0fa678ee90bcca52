// Records with a base class, a float, an array and a pointer, copied by std::vector's
// constructor, reordered by std::sort on their int key and by std::swap; records holding a
// union (IR type: its double member) pushed into a std::vector and swapped. At -O2 the sort's
// moves become pieces (a double, an int, a 44-byte rest) read through pointers that walk the
// array: the record type comes from the GEPs. Reverse mode against central differences, forward
// mode against reverse (the dot-product test).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>
static int failed;
static void check(const char *name, int i, double got, double want, double tol) {
  bool ok = std::fabs(got - want) <= tol * (1.0 + std::fabs(want));
  std::printf("CHECK %s[%d] %.12g %.12g%s\n", name, i, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern "C" {
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}
struct Base { double m; int tag; };
struct Part : Base { float q; double pos[3]; Part *next; };
union U { double d; long long bits; };
struct WithU { int kind; U u; float f; };
enum { N = 5 };

double f(Part *ps, WithU *ws, int n) {
  std::vector<Part> v(ps, ps + n);
  std::sort(v.begin(), v.end(), [](const Part &a, const Part &b) { return a.tag > b.tag; });
  std::swap(v[0], v[n - 1]);
  std::vector<WithU> wv;
  for (int i = 0; i < n; i++) wv.push_back(ws[i]);
  std::swap(wv[0], wv[1]);
  double r = 0;
  for (int i = 0; i < n; i++)
    r += v[i].m * v[i].pos[2] * (i + 1) + (double)v[i].q * v[i].pos[0] +
         wv[i].u.d * (double)wv[i].f * (i + 2);
  return r;
}

static Part ps[N], dps[N], tps[N];
static WithU ws[N], dws[N], tws[N];

int main() {
  const int tags[N] = {3, 0, 4, 1, 2};
  for (int i = 0; i < N; i++) {
    ps[i].m = 0.5 + i; ps[i].tag = tags[i]; ps[i].q = 0.25f * i + 0.5f;
    ps[i].pos[0] = 0.1 * i; ps[i].pos[1] = 1; ps[i].pos[2] = 2 - 0.7 * i; ps[i].next = nullptr;
    ws[i].kind = i; ws[i].u.d = 1.5 - i; ws[i].f = 0.5f + i;
  }
  __enzyme_autodiff((void *)f, enzyme_dup, ps, dps, enzyme_dup, ws, dws, enzyme_const, (int)N);
  auto fd = [](const char *name, int i, auto &var, double grad, double h) {
    auto o = var;
    var = o + h; double a = f(ps, ws, N);
    var = o - h; double b = f(ps, ws, N);
    var = o;
    check(name, i, grad, (a - b) / (2 * h), 1e-6);   // floats: steps of 1/64
  };
  double dot = 0, jt;
  for (int i = 0; i < N; i++) {
    fd("m", i, ps[i].m, dps[i].m, 1e-6);
    fd("q", i, ps[i].q, dps[i].q, 1.0 / 64);
    fd("pos0", i, ps[i].pos[0], dps[i].pos[0], 1e-6);
    fd("pos2", i, ps[i].pos[2], dps[i].pos[2], 1e-6);
    fd("u.d", i, ws[i].u.d, dws[i].u.d, 1e-6);
    fd("f", i, ws[i].f, dws[i].f, 1.0 / 64);
    tps[i].m = std::sin(i + 1.0); tps[i].q = (float)std::cos(2.0 * i);
    tps[i].pos[0] = std::sin(3.0 + i); tps[i].pos[2] = std::cos(i + 0.3);
    tws[i].u.d = std::sin(0.7 * i); tws[i].f = (float)std::cos(i + 1.1);
    dot += tps[i].m * dps[i].m + tps[i].q * dps[i].q + tps[i].pos[0] * dps[i].pos[0] +
           tps[i].pos[2] * dps[i].pos[2] + tws[i].u.d * dws[i].u.d + tws[i].f * dws[i].f;
  }
  jt = __enzyme_fwddiff((void *)f, enzyme_dup, ps, tps, enzyme_dup, ws, tws, enzyme_const, (int)N);
  check("forward.dot", 0, jt, dot, 1e-6);    // float fields: float rounding
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
