/* The runtime from <enzyme/fprt/mpfr.h> (included, so the program's own weak definitions are
   used): division, square root and libm calls truncated to 8 exponent / 12 significand bits,
   checked against MPFR called directly here with 12 bits of precision. */
#include "check.h"
#include <enzyme/fprt/mpfr.h>
void *__enzyme_truncate_op_func(void *, int, int, ...);

static double f(double a, double b) {
  double q = a / b;
  double r = sqrt(q);
  double s = exp(r);
  return pow(s, b);
}
static double mp(double a, double b, int p) {
  mpfr_t x, y, t;
  mpfr_inits2(p, x, y, t, (mpfr_ptr)0);
  mpfr_set_d(x, a, MPFR_RNDN), mpfr_set_d(y, b, MPFR_RNDN);
  mpfr_div(t, x, y, MPFR_RNDN);
  mpfr_sqrt(t, t, MPFR_RNDN);
  mpfr_exp(t, t, MPFR_RNDN);
  mpfr_pow(t, t, y, MPFR_RNDN);
  double out = mpfr_get_d(t, MPFR_RNDN);
  mpfr_clears(x, y, t, (mpfr_ptr)0);
  return out;
}
typedef double (*F)(double, double);
int main(void) {
  F t12 = (F)__enzyme_truncate_op_func((void *)f, 64, 8, 12);
  for (int k = 0; k < 4; k++) {
    double a = fabs(rnd(k)) + 0.1, b = fabs(rnd(k + 5)) + 0.5;
    check_exact("op_p12", t12(a, b), mp(a, b, 12));
    check_near("op_p12_vs_double", t12(a, b), f(a, b), 1e-2);
  }
  return report();
}
