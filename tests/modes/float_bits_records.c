/* Records of more than 8 bytes holding a float beside other data in integer eightbytes, returned
   by value: x86-64 returns them as a struct of integers (`{ i32, i64 }`, `{ i64, i32 }`,
   `{ i64, i64 }`), or of integers beside floats (`{ double, i64 }`, `{ i64, float }`), the
   float's bits whole in one integer field. The derivative through such a return
   takes that field as the float (the adjoint a `{ i32, double }`); they were refused ("returns a
   float's bits among other data in integers"). Directly, stored into an array of records on the
   way, and through a function pointer whose targets all return the float in the same field.
   Each line: enzyme-cc | analytic. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
int enzyme_dup, enzyme_const;

typedef struct { int ok; union { double value; char *message; } u; } Result;    /* { i32, i64 } */
typedef struct { union { double q; const char *why; } u; int code; } Quotient;  /* { i64, i32 } */
typedef struct { union { double a; long k; } x; union { double b; char *m; } y; } Pair;
typedef struct { double w; union { double v; char *m; } u; } Weighed;  /* { double, i64 } */
typedef struct { union { double v; char *m; } u; float f; } Tagged;    /* { i64, float } */

__attribute__((noinline)) static Result attempt(double t) {
  Result r;
  r.ok = t > -1.0;
  if (r.ok) r.u.value = sqrt(t + 1.0) * t;
  else { r.u.message = malloc(4); r.u.message[0] = 0; }
  return r;
}
__attribute__((noinline)) static Quotient divide(double a, double b) {
  Quotient q;
  if (b != 0) { q.u.q = a / b; q.code = 0; } else { q.u.why = "b = 0"; q.code = 1; }
  return q;
}
__attribute__((noinline)) static Pair both(double s, double t) {
  Pair p;
  p.x.a = s * t;
  p.y.b = s + t * t;
  return p;
}
__attribute__((noinline)) static Weighed weigh(double a) {
  Weighed r;
  r.w = a * a;
  if (a > 0) r.u.v = sin(a); else r.u.m = "a <= 0";
  return r;
}
__attribute__((noinline)) static Tagged tag(double a) {
  Tagged r;
  r.u.v = 3 * a;
  r.f = (float)a;
  return r;
}
__attribute__((noinline)) static Result squared(double t) { Result r = {1, {.value = t * t}}; return r; }
__attribute__((noinline)) static Result cubed(double t) { Result r = {1, {.value = t * t * t}}; return r; }
Result (*volatile power[2])(double) = {squared, cubed};

double settle(const double *x, int n) {
  Result seen[8];
  for (int i = 0; i < n; i++) seen[i] = attempt(x[i]);
  double s = 0;
  for (int i = 0; i < n; i++) {
    if (seen[i].ok) s += seen[i].u.value * (i + 1); else free(seen[i].u.message);
  }
  Quotient q = divide(x[0], x[2]);
  if (!q.code) s += q.u.q;
  Pair p = both(x[0], x[2]);
  s += p.x.a * p.y.b;
  Result r = power[x[2] > 1](x[0]);
  Weighed w = weigh(x[3]);
  Tagged g = tag(x[3]);
  return s + 2 * r.u.value + w.w + (x[3] > 0 ? w.u.v : 0) + g.u.v + g.f;
}

/* d/dt of t * sqrt(t + 1) where t > -1, else 0 */
static double d_attempt(double t) {
  return t > -1.0 ? sqrt(t + 1.0) + 0.5 * t / sqrt(t + 1.0) : 0.0;
}

int main(void) {
  double x[4] = {0.5, -2.0, 1.5, 0.25}, dx[4] = {0};
  double s = x[0], t = x[2], a = s * t, b = s + t * t;
  double want[4] = {d_attempt(s) + 1 / t + t * b + a + 6 * s * s,
                    2 * d_attempt(x[1]),
                    3 * d_attempt(t) - s / (t * t) + s * b + a * 2 * t,
                    4 * d_attempt(x[3]) + 2 * x[3] + cos(x[3]) + 3 + 1};
  __enzyme_autodiff((void *)settle, enzyme_dup, x, dx, enzyme_const, 4);
  for (int k = 0; k < 4; k++) {
    double tx[4] = {0};
    tx[k] = 1.0;
    double fwd = __enzyme_fwddiff((void *)settle, enzyme_dup, x, tx, enzyme_const, 4);
    printf("reverse dx[%d]: %.9g | %.9g\n", k, dx[k], want[k]);
    printf("forward dx[%d]: %.9g | %.9g\n", k, fwd, want[k]);
  }
  return 0;
}
