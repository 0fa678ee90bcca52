/* fmin/fmax (and their float kin, and llvm.maximumnum) whose operand not chosen is infinite: an adaptive
   step clamped by fmin(h_max, h * scale) where the error estimate was 0, a cut-off
   fmax(p, 1 / v) with v = 0. The chosen operand's derivative is the result's; the other's
   tangent is NaN (the tangent of 1/0) and its partial derivative 0, so forward mode's sum
   0 * NaN gave NaN, and in reverse its zero adjoint times the infinite partial derivative of
   the division gave NaN: a NaN derivative with no error (found in Rodinia's myocyte-like
   solvers). Checked against analytic values, reverse and forward mode. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-9 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

/* the step grows by (tol / err)^(1/5), capped at 4 h; err is 0 where x == 1 */
__attribute__((noinline)) static double step(double h, double x) {
  double err = fabs(x - 1.0) * h;
  return fmin(4.0 * h, h * pow(1e-6 / err, 0.2));
}
__attribute__((noinline)) static double cap(double p, double v) {
  return fmax(p * p, -1.0 / (v - v));              /* -inf: p * p is chosen */
}
__attribute__((noinline)) static float capf(float p, float v) {
  return fminf(p * p, 1.0f / (v - v));             /* +inf: p * p is chosen */
}
__attribute__((noinline)) static double both(double h, double x) {
  return step(h, x) + cap(h, x) + __builtin_fmaximum_num(h, -1.0 / (x - x));
}

int main(void) {
  check("step_rev", __enzyme_autodiff((void *)step, 0.5, enzyme_const, 1.0), 4.0);
  check("step_fwd", __enzyme_fwddiff((void *)step, 0.5, 1.0, enzyme_const, 1.0), 4.0);
  check("cap_rev", __enzyme_autodiff((void *)cap, 3.0, enzyme_const, 2.0), 6.0);
  check("cap_fwd", __enzyme_fwddiff((void *)cap, 3.0, 1.0, enzyme_const, 2.0), 6.0);
  float pf = 1.5f, vf = 2.0f;
  check("capf_fwd", (double)((float (*)(void *, ...))__enzyme_fwddiff)((void *)capf, pf, 1.0f,
                                                                        enzyme_const, vf), 3.0);
  check("both_rev", __enzyme_autodiff((void *)both, 0.5, enzyme_const, 1.0), 4.0 + 1.0 + 1.0);
  check("both_fwd", __enzyme_fwddiff((void *)both, 0.5, 1.0, enzyme_const, 1.0), 4.0 + 1.0 + 1.0);
  return failed != 0;
}
