/* An adaptive integrator's step control: the first trial step is too large, its solution
   overflows (exp of a large argument: inf), the step is rejected and shrunk by a factor clamped
   to a constant, and the loop tries again. The overflowed trial is computed anew by the next
   iteration without being used: its adjoint is zero, and the reverse multiplied that zero by
   the infinite partial derivative of exp: a NaN gradient with no error (Rodinia's myocyte
   solver). Reverse mode against central differences and forward mode, at the accepted step. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
void __enzyme_fwddiff(void *, ...);

__attribute__((noinline)) static void advance(const double *k, double *y) {
  double h = 1.0, trial = 0.0;
  for (int attempt = 0; attempt < 12; attempt++) {
    trial = exp(k[0] * h * 900.0) * k[1];       /* inf while h is too large */
    double err = fabs(trial) * 1e-3;
    if (err < 1.0) break;                        /* accepted */
    double shrink = 0.9 * pow(1e-2 / err, 0.2);  /* 0 where err is inf */
    h *= shrink > 0.2 ? shrink : 0.2;            /* the clamp chooses the constant */
  }
  *y = trial + 0.5 * h;
}

int main(void) {
  double k[2] = {1.0, 0.7}, dk[2] = {0, 0}, y = 0, dy = 1;
  __enzyme_autodiff((void *)advance, enzyme_dup, k, dk, enzyme_dup, &y, &dy);
  for (int i = 0; i < 2; i++) {
    double kp[2] = {k[0], k[1]}, km[2] = {k[0], k[1]}, yp, ym, h = 1e-7;
    kp[i] += h;
    km[i] -= h;
    advance(kp, &yp);
    advance(km, &ym);
    char name[32];
    snprintf(name, sizeof name, "rev_fd[%d]", i);
    check(name, dk[i], (yp - ym) / (2 * h));
    double t[2] = {i == 0, i == 1}, y2, ty = 0;
    __enzyme_fwddiff((void *)advance, enzyme_dup, k, t, enzyme_dup, &y2, &ty);
    snprintf(name, sizeof name, "fwd_rev[%d]", i);
    check(name, ty, dk[i]);
  }
  return failed != 0;
}
