/* A float's exponent and sign fields read from its bits: piecewise constant, so their
   derivative is zero and the derivative through the float itself is kept. A value scaled by
   ldexp with the exponent (a frexp written by hand), the exponent used as a number, the sign
   bit as a factor. The exponent passed to ldexp was refused ("integer arithmetic on data that
   holds a float"); reading the mantissa field as a number is refused instead
   (tests/test_ad_errors.py, mantissa_as_number). Each line: enzyme-cc | analytic. */
#include <math.h>
#include <stdio.h>
#include <string.h>
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
typedef unsigned long long u64;
typedef unsigned int u32;

/* x = m * 2^e with m in [1, 2) for normal x: m by ldexp, e from the exponent field */
static double mantissa(double x, int *e) {
  u64 b;
  memcpy(&b, &x, sizeof b);
  *e = (int)((b >> 52) & 0x7ff) - 1023;
  return ldexp(x, -*e);
}

static float signed_square(float y) {
  u32 b;
  memcpy(&b, &y, sizeof b);
  float s = (b >> 31) ? -1.0f : 1.0f;
  return s * y * y;
}

double objective(double x) {
  int e;
  double m = mantissa(x * x + 1.0, &e);
  return m * m + 0.25 * e + signed_square((float)(x - 1.0));
}

int main(void) {
  double xs[3] = {0.3, 1.7, 2.9};
  for (int i = 0; i < 3; i++) {
    double x = xs[i], u = x * x + 1.0;
    int e = (int)floor(log2(u));
    double want = 2 * (u / ldexp(1.0, e)) * (2 * x / ldexp(1.0, e)) + 2 * fabs((float)(x - 1.0));
    printf("x=%g: %.12g | %.12g\n", x, __enzyme_autodiff((void *)objective, x), want);
    printf("x=%g forward: %.12g | %.12g\n", x, __enzyme_fwddiff((void *)objective, x, 1.0), want);
  }
  return 0;
}
