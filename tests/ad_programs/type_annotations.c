/* Enzyme's type annotations (__enzyme_double, __enzyme_float, __enzyme_integer,
   __enzyme_pointer): evidence for type analysis that leave no code behind (the program would
   not link if a call stayed). Untyped copies through void* helpers, gradients checked
   analytically, and forward mode against reverse mode. */
#include <math.h>
#include <stdio.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
void __enzyme_double(void *);
void __enzyme_float(void *);
void __enzyme_integer(void *);
void __enzyme_pointer(void *);

__attribute__((noinline)) void copy_doubles(void *dst, const void *src, unsigned long n) {
  __enzyme_double(dst);
  __enzyme_double((void *)src);
  memcpy(dst, src, n);
}
__attribute__((noinline)) void copy_floats(void *dst, const void *src, unsigned long n) {
  __enzyme_float(dst);
  __enzyme_float((void *)src);
  memcpy(dst, src, n);
}
__attribute__((noinline)) void copy_ints(void *dst, const void *src, unsigned long n) {
  __enzyme_integer(dst);
  __enzyme_integer((void *)src);
  memcpy(dst, src, n);
}

/* f = t0 * t1 * s0 + t1^2 * i0, through copies of each type; p only holds a pointer */
double f(const double *x, const float *s, const int *k) {
  double t[2];
  float u[1];
  int i[1];
  const double *p = x;
  __enzyme_pointer(&p);
  copy_doubles(t, p, sizeof t);
  copy_floats(u, s, sizeof u);
  copy_ints(i, k, sizeof i);
  return t[0] * t[1] * u[0] + t[1] * t[1] * i[0];
}

int main(void) {
  double x[2] = {3, 5}, dx[2] = {0, 0};
  float s[1] = {2}, ds[1] = {0};
  int k[1] = {7};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_dup, s, ds, enzyme_const, k);
  check("df_dx0", dx[0], x[1] * s[0]);
  check("df_dx1", dx[1], x[0] * s[0] + 2 * x[1] * k[0]);
  check("df_ds0", ds[0], x[0] * x[1]);
  /* forward mode along v = (0.3, -0.7 | 0.2) against the reverse gradient */
  double v[2] = {0.3, -0.7};
  float vs[1] = {0.2f};
  double jv = __enzyme_fwddiff((void *)f, enzyme_dup, x, v, enzyme_dup, s, vs, enzyme_const, k);
  check("dot_fwd_rev", jv, v[0] * dx[0] + v[1] * dx[1] + vs[0] * ds[0]);
  check("primal", f(x, s, k), 3.0 * 5 * 2 + 25.0 * 7);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
