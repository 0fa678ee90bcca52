/* Reverse vector mode where some reverse functions can run their lanes side by side and others
   cannot: mutually recursive f and g2, and f also calls k, whose local array keeps its shadow in
   memory (made once by the forward sweep, so its lanes run one after another). The fused copy
   of g2 made on the way (it calls f's) is dropped when f turns out not to fuse; a second marker
   differentiates the self-recursive g alone, whose lanes do fuse. Every lane against width 1 and central
   differences; forward-vs-reverse dot products. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want, double rtol) {
  int ok = fabs(got - want) <= rtol * (1.0 + fabs(want));
  printf("CHECK %s %.15g %.15g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_dupnoneed, enzyme_const, enzyme_width;
void __enzyme_autodiff(void *, ...);
void __enzyme_fwddiff(void *, ...);

__attribute__((noinline)) static void h(double *w, double c) { w[0] = sin(w[0] * c) * w[1]; }
__attribute__((noinline)) static double k(const double *x) {
  double w[2] = {x[0], x[1]};
  h(w, 0.5);
  return w[0];
}
static double g2(const double *x, int n);
__attribute__((noinline)) static double f(const double *x, int n) {
  if (n <= 0)
    return x[0];
  double a = k(x);
  double b = g2(x, n - 1);   /* its reverse comes first in f's, and is fused before k's fails */
  return a * b;
}
__attribute__((noinline)) static double g2(const double *x, int n) { return x[1] * f(x, n) + 1; }
__attribute__((noinline)) static double g(const double *x, int n) {
  return n <= 0 ? x[1] * x[1] : x[1] * g(x, n - 1) + cos(x[0]);
}
static void both(const double *x, double *out, int n) {
  out[0] = f(x, n);
  out[1] = x[0] * g(x, n);
}
static void only_g(const double *x, double *out, int n) {
  out[0] = g(x, n);
  out[1] = x[1] * g(x, n + 1);
}

/* the checks of one function fn (a macro: markers need the function itself) */
#define JACOBIAN_CHECKS(tag, fn) do { \
  double x[2] = {0.7, 1.3}, out[2]; \
  for (int n = 2; n <= 3; n++) { \
    double d[2][2] = {{0}}, s[2][2] = {{1, 0}, {0, 1}}; \
    __enzyme_autodiff((void *)fn, enzyme_width, 2, enzyme_dup, x, d[0], d[1], enzyme_dupnoneed, \
                      out, s[0], s[1], enzyme_const, n); \
    for (int l = 0; l < 2; l++) { \
      double r[2] = {0}, sl[2] = {l == 0, l == 1}; \
      __enzyme_autodiff((void *)fn, enzyme_dup, x, r, enzyme_dupnoneed, out, sl, enzyme_const, n); \
      for (int j = 0; j < 2; j++) { \
        double hstep = 1e-6, xp[2] = {x[0], x[1]}, xm[2] = {x[0], x[1]}, op[2], om[2]; \
        xp[j] += hstep; \
        xm[j] -= hstep; \
        fn(xp, op, n); \
        fn(xm, om, n); \
        char name[48]; \
        snprintf(name, sizeof name, "%s_n%d_l%d_x%d_fd", tag, n, l, j); \
        check(name, r[j], (op[l] - om[l]) / (2 * hstep), 1e-6); \
        snprintf(name, sizeof name, "%s_n%d_l%d_x%d_w2", tag, n, l, j); \
        check(name, d[l][j], r[j], 1e-13); \
      } \
    } \
    /* forward vs reverse: <e_l, J v> == <J^T e_l, v> */ \
    double v[2] = {0.3, -1.1}, t[2], o2[2]; \
    __enzyme_fwddiff((void *)fn, enzyme_dup, x, v, enzyme_dupnoneed, o2, t, enzyme_const, n); \
    for (int l = 0; l < 2; l++) { \
      char name[48]; \
      snprintf(name, sizeof name, "%s_n%d_fwd_rev_l%d", tag, n, l); \
      check(name, t[l], d[l][0] * v[0] + d[l][1] * v[1], 1e-12); \
    } \
  } \
} while (0)

int main(void) {
  JACOBIAN_CHECKS("both", both);
  JACOBIAN_CHECKS("only_g", only_g);
  printf("%s\n", failed ? "FAILED" : "OK");
  return failed != 0;
}
