/* enzyme_primal_return in __enzyme_autodiff: the result is Enzyme's {primal, {adjoints...}}
   (declared flat or nested), the primal computed once (a side effect on *acc happens once per
   call), with enzyme_const_return (no seed: only the pointer's adjoint counts), a void
   function (adjoints only), and a function differentiated as a callee. Checked against
   analytic derivatives and forward mode (dot-product test). */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-12 * (1.0 + fabs(want));
  printf("CHECK %s %.15g %.15g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const, enzyme_out, enzyme_primal_return, enzyme_const_return;
typedef struct { double primal, dx, dk; } Flat;
typedef struct { double primal; struct { double dx; } d; } Nested;
typedef struct { double dx, dk; } Pair;
Flat __enzyme_autodiff(void *, ...);
Nested __enzyme_autodiff_nested(void *, ...) __asm__("__enzyme_autodiff");
double __enzyme_autodiff_one(void *, ...) __asm__("__enzyme_autodiff");
Pair __enzyme_autodiff_pair(void *, ...) __asm__("__enzyme_autodiff");
double __enzyme_fwddiff(void *, ...);

/* returns k sin(x) + x^2 acc[0]; acc[0] += x k */
__attribute__((noinline)) double f(double x, double k, double *acc) {
  double r = k * sin(x) + x * x * acc[0];
  acc[0] += x * k;
  return r;
}
double g(double x, double k, double *acc) { return exp(f(x, k, acc)) * 0.1; }
void h(double x, double k, double *out) { out[0] = x * x * k; }

int main(void) {
  double x = 0.7, k = 1.3;
  double acc = 0.5, dacc = 0.25;
  Flat r = __enzyme_autodiff((void *)f, enzyme_primal_return, x, k, enzyme_dup, &acc, &dacc);
  check("flat_primal", r.primal, k * sin(x) + x * x * 0.5);
  check("flat_acc_once", acc, 0.5 + x * k);
  /* d/dx: k cos x + 2 x acc0 + dacc_in * k ; d/dk: sin x + dacc_in * x; dacc: x^2 + dacc_in */
  check("flat_dx", r.dx, k * cos(x) + 2 * x * 0.5 + 0.25 * k);
  check("flat_dk", r.dk, sin(x) + 0.25 * x);
  check("flat_dacc", dacc, x * x + 0.25);

  /* nested layout, k constant */
  acc = 0.5;
  dacc = 0;
  Nested n = __enzyme_autodiff_nested((void *)f, x, enzyme_const, k, enzyme_dup, &acc, &dacc,
                                      enzyme_primal_return);
  check("nested_primal", n.primal, k * sin(x) + x * x * 0.5);
  check("nested_dx", n.d.dx, k * cos(x) + 2 * x * 0.5);

  /* enzyme_const_return: the result is not seeded, only acc's adjoint flows */
  acc = 0.5;
  dacc = 1;
  Flat c = __enzyme_autodiff((void *)f, enzyme_const_return, enzyme_primal_return, x, k,
                             enzyme_dup, &acc, &dacc);
  check("const_return_primal", c.primal, k * sin(x) + x * x * 0.5);
  check("const_return_dx", c.dx, k);
  check("const_return_dk", c.dk, x);

  /* f as a callee of g */
  acc = 0.5;
  dacc = 0;
  Flat q = __enzyme_autodiff((void *)g, enzyme_primal_return, x, k, enzyme_dup, &acc, &dacc);
  double fv = k * sin(x) + x * x * 0.5, gv = exp(fv) * 0.1;
  check("callee_primal", q.primal, gv);
  check("callee_dx", q.dx, gv * (k * cos(x) + x));
  check("callee_dk", q.dk, gv * sin(x));
  double fa = 0.5, fda = 0, vx = 0.3, vk = -0.8;
  double t = __enzyme_fwddiff((void *)g, x, vx, k, vk, enzyme_dup, &fa, &fda);
  check("callee_fwd_rev_dot", t, vx * q.dx + vk * q.dk);

  /* void function: the adjoints alone */
  double out = 0, dout = 1;
  Pair p = __enzyme_autodiff_pair((void *)h, enzyme_primal_return, x, k, enzyme_dup, &out, &dout);
  check("void_dx", p.dx, 2 * x * k);
  check("void_dk", p.dk, x * x);
  check("void_out", out, x * x * k);
  return failed != 0;
}
