/* Batch mode: __enzyme_batch(f, enzyme_width, N, ...) runs f on N inputs (enzyme_vector: one
   value per lane, the default; enzyme_scalar: one value shared by the lanes) and returns the N
   results in the declared struct/array/vector. Every lane must equal a single call of f: scalars,
   floats, pointers with per-lane buffers, a struct returned in memory, a callee, a loop, a
   batched forward derivative; a function calling __enzyme_batch is differentiated in reverse
   and forward mode (central differences, dot-product test). */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want, double rtol) {
  int ok = fabs(got - want) <= rtol * (1.0 + fabs(want));
  printf("CHECK %s %.15g %.15g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_width, enzyme_vector, enzyme_scalar, enzyme_dup, enzyme_const;
typedef struct { double v[2]; } D2;
typedef struct { double a, b, c, d; } D4;      /* returned in memory (sret) */
typedef struct { float v[2]; } F2;             /* returned in a vector register */
D2 __enzyme_batch(void *, ...);
D4 __enzyme_batch4(void *, ...) __asm__("__enzyme_batch");
F2 __enzyme_batchf(void *, ...) __asm__("__enzyme_batch");
void __enzyme_batchv(void *, ...) __asm__("__enzyme_batch");
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

__attribute__((noinline)) static double weight(double x, double k) { return k * sin(x) + x * x; }
/* a loop over an array and a callee */
static double poly(const double *c, int n, double x) {
  double s = 0;
  for (int i = 0; i < n; i++) s = s * x + weight(c[i], x);
  return s;
}
static double scaled(double k, double x) { return k * x * x * x; }
static float halve(float x, int n) { return x / n + 0.25f; }
/* writes through its pointer: each lane gets its own buffer */
static void normalize(double *v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += v[i] * v[i];
  s = sqrt(s);
  for (int i = 0; i < n; i++) v[i] /= s;
}
static double dscaled(double k, double x) { return __enzyme_fwddiff((void *)scaled, k, 0.0, x, 1.0); }

/* differentiated below: two lanes of poly sharing the coefficients */
static double both(const double *c, double x) {
  D2 r = __enzyme_batch((void *)poly, enzyme_width, 2, enzyme_scalar, c, enzyme_scalar, 3,
                        enzyme_vector, x, 2 * x + 1);
  return r.v[0] * r.v[1];
}

int main(void) {
  double c[3] = {0.5, -1.25, 2.0};
  D2 p = __enzyme_batch((void *)poly, enzyme_width, 2, enzyme_scalar, c, enzyme_scalar, 3,
                        enzyme_vector, 0.7, -1.3);
  check("poly_lane0", p.v[0], poly(c, 3, 0.7), 0);
  check("poly_lane1", p.v[1], poly(c, 3, -1.3), 0);
  /* no tags: every parameter is enzyme_vector */
  D4 s = __enzyme_batch4((void *)scaled, enzyme_width, 4, 1.0, 2.0, 3.0, 4.0, 0.5, 1.5, -2.0, 3.0);
  check("sret_lane0", s.a, scaled(1.0, 0.5), 0);
  check("sret_lane1", s.b, scaled(2.0, 1.5), 0);
  check("sret_lane2", s.c, scaled(3.0, -2.0), 0);
  check("sret_lane3", s.d, scaled(4.0, 3.0), 0);
  F2 h = __enzyme_batchf((void *)halve, enzyme_width, 2, enzyme_vector, 3.0f, 5.0f,
                         enzyme_scalar, 2);
  check("float_lane0", h.v[0], halve(3.0f, 2), 0);
  check("float_lane1", h.v[1], halve(5.0f, 2), 0);
  double a[3] = {3, 4, 12}, b[3] = {1, 2, 2}, a1[3] = {3, 4, 12};
  __enzyme_batchv((void *)normalize, enzyme_width, 2, enzyme_vector, a, b, enzyme_scalar, 3);
  normalize(a1, 3);
  for (int i = 0; i < 3; i++) {
    char name[32];
    snprintf(name, sizeof name, "ptr_lane0_%d", i);
    check(name, a[i], a1[i], 0);
    snprintf(name, sizeof name, "ptr_lane1_%d", i);
    check(name, b[i], (i ? 2.0 : 1.0) / 3.0, 1e-15);
  }
  /* a batched function that itself calls a forward derivative: 3 k x^2 per lane */
  D2 d = __enzyme_batch((void *)dscaled, enzyme_width, 2, enzyme_scalar, 2.0, enzyme_vector, 1.0, 3.0);
  check("fwd_lane0", d.v[0], 6.0, 1e-15);
  check("fwd_lane1", d.v[1], 54.0, 1e-15);

  /* derivatives through a batch call: reverse vs central differences, forward vs reverse */
  double x = 0.4, dc[3] = {0}, hh = 1e-6;
  double dx = __enzyme_autodiff((void *)both, enzyme_dup, c, dc, x);
  check("rev_x", dx, (both(c, x + hh) - both(c, x - hh)) / (2 * hh), 1e-6);
  for (int i = 0; i < 3; i++) {
    double keep = c[i];
    c[i] = keep + hh;
    double up = both(c, x);
    c[i] = keep - hh;
    double dn = both(c, x);
    c[i] = keep;
    char name[32];
    snprintf(name, sizeof name, "rev_c%d", i);
    check(name, dc[i], (up - dn) / (2 * hh), 1e-6);
  }
  double vc[3] = {0.3, -0.7, 1.1}, vx = 0.9;
  double jv = __enzyme_fwddiff((void *)both, enzyme_dup, c, vc, x, vx);
  double wjtv = vx * dx + vc[0] * dc[0] + vc[1] * dc[1] + vc[2] * dc[2];
  check("dot_fwd_rev", jv, wjtv, 1e-12);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
