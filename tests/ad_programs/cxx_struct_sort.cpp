/* Structs {double a; int k; double *p;} copied by value (assignment, std::swap, std::sort's
   moves, passing and returning by value): SROA splits the copies into the double, the int and
   a 12-byte slice (padding + pointer) held in a byte array, whose layout comes from the struct
   type it is copied from or to. The pointer field's shadow travels with it. std::sort's
   insertion step and std::vector's growth memmove/memcpy a variable number of records: their
   adjoint moves the float field of each record and the pointer field's shadow. Reverse mode
   against the analytic derivative, forward against reverse. */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = std::fabs(got - want) <= 1e-5 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern "C" {
int enzyme_dup;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}
struct S { double a; int k; double *p; };
__attribute__((noinline)) S scaled(S s, double c) { s.a *= c; return s; }

/* sum_i a_i k_i p_i[0] with a_i = x (i+1), k_i = 5 - i, p_i = q + i % 2, permuted by sorting */
double f(double x, double *q) {
  S v[5];
  for (int i = 0; i < 5; i++) v[i] = S{x * (i + 1), 5 - i, q + (i % 2)};
  std::sort(v, v + 5, [](const S &l, const S &r) { return l.k < r.k; });
  std::swap(v[0], v[4]);
  S t = scaled(v[2], 2.0);
  v[2] = t;
  double s = 0;
  for (auto &e : v) s += e.a * e.k * e.p[0];
  return s;
}

/* sum_i a_i k_i p_i[0] over 23 records pushed into a growing vector (each growth copies
   them), then sorted by k (introsort + insertion steps over runs of records) */
double g(double x, double *q) {
  std::vector<S> v;
  for (int i = 0; i < 23; i++) v.push_back(S{x * (i + 1), (7 * i) % 5, q + (i % 2)});
  std::sort(v.begin(), v.end(), [](const S &l, const S &r) { return l.k < r.k; });
  double s = 0;
  for (auto &e : v) s += e.a * e.k * e.p[0];
  return s;
}

int main() {
  double x = 1.5, q[2] = {2.0, 3.0}, dq[2] = {0, 0};
  /* df/dx = sum_i (i+1)(5-i) q[i%2] (x2 for i = 2); df/dq[j] = sum_{i%2==j} x (i+1)(5-i) (x2) */
  double want_x = 0, want_q[2] = {0, 0};
  for (int i = 0; i < 5; i++) {
    double c = (i + 1) * (5 - i) * (i == 2 ? 2.0 : 1.0);
    want_x += c * q[i % 2];
    want_q[i % 2] += c * x;
  }
  check("dx_reverse", __enzyme_autodiff((void *)f, x, enzyme_dup, q, dq), want_x);
  check("dq0_reverse", dq[0], want_q[0]);
  check("dq1_reverse", dq[1], want_q[1]);
  /* forward along (tx, tq) against <(tx, tq), gradient> */
  double tq[2] = {0.3, -0.7}, tx = 0.5;
  check("forward", __enzyme_fwddiff((void *)f, x, tx, enzyme_dup, q, tq),
        tx * want_x + tq[0] * want_q[0] + tq[1] * want_q[1]);
  /* g: dg/dx = sum_i (i+1) k_i q[i%2], dg/dq[j] = sum_{i%2==j} x (i+1) k_i */
  double gx = 0, gq[2] = {0, 0}, dq2[2] = {0, 0};
  for (int i = 0; i < 23; i++) {
    gx += (i + 1) * ((7 * i) % 5) * q[i % 2];
    gq[i % 2] += x * (i + 1) * ((7 * i) % 5);
  }
  check("vector_dx_reverse", __enzyme_autodiff((void *)g, x, enzyme_dup, q, dq2), gx);
  check("vector_dq0_reverse", dq2[0], gq[0]);
  check("vector_dq1_reverse", dq2[1], gq[1]);
  check("vector_forward", __enzyme_fwddiff((void *)g, x, tx, enzyme_dup, q, tq),
        tx * gx + tq[0] * gq[0] + tq[1] * gq[1]);
  return failed != 0;
}
