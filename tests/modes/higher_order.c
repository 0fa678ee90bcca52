/* Derivatives up to 4th order of a cos summed as a Taylor series in a loop (the inner
   derivatives keep loop values on their tape), every nesting of forward and reverse mode,
   each called several times. Checked against -sin, -cos, sin, cos and against central
   differences of the derivative one order lower. */
#include <stdio.h>
#include <math.h>
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

static double taylor_cos(double x) {
  double term = 1, sum = 1;
  for (int k = 1; k < 30; k++) {
    term *= -x * x / ((2 * k - 1) * (2 * k));
    sum += term;
  }
  return sum;
}
static double r1(double x) { return __enzyme_autodiff((void *)taylor_cos, x); }
static double f1(double x) { return __enzyme_fwddiff((void *)taylor_cos, x, 1.0); }
static double rr2(double x) { return __enzyme_autodiff((void *)r1, x); }
static double fr2(double x) { return __enzyme_fwddiff((void *)r1, x, 1.0); }
static double rf2(double x) { return __enzyme_autodiff((void *)f1, x); }
static double ff2(double x) { return __enzyme_fwddiff((void *)f1, x, 1.0); }
static double rrr3(double x) { return __enzyme_autodiff((void *)rr2, x); }
static double frr3(double x) { return __enzyme_fwddiff((void *)rr2, x, 1.0); }
static double rfr3(double x) { return __enzyme_autodiff((void *)fr2, x); }
static double rrrr4(double x) { return __enzyme_autodiff((void *)rrr3, x); }
static double ffrr4(double x) { return __enzyme_fwddiff((void *)frr3, x, 1.0); }

int main(void) {
  for (int call = 0; call < 3; call++) {
    double x = 0.4 + 0.3 * call, h = 1e-5;
    printf("r1 %.10g | %.10g\n", r1(x), -sin(x));
    printf("f1 %.10g | %.10g\n", f1(x), -sin(x));
    printf("rr2 %.10g | %.10g\n", rr2(x), -cos(x));
    printf("fr2 %.10g | %.10g\n", fr2(x), -cos(x));
    printf("rf2 %.10g | %.10g\n", rf2(x), -cos(x));
    printf("ff2 %.10g | %.10g\n", ff2(x), -cos(x));
    printf("rr2 fd %.10g | %.10g\n", rr2(x), (r1(x + h) - r1(x - h)) / (2 * h));
    printf("rrr3 %.10g | %.10g\n", rrr3(x), sin(x));
    printf("frr3 %.10g | %.10g\n", frr3(x), sin(x));
    printf("rfr3 %.10g | %.10g\n", rfr3(x), sin(x));
    printf("rrr3 fd %.10g | %.10g\n", rrr3(x), (rr2(x + h) - rr2(x - h)) / (2 * h));
    printf("rrrr4 %.10g | %.10g\n", rrrr4(x), cos(x));
    printf("ffrr4 %.10g | %.10g\n", ffrr4(x), cos(x));
    printf("rrrr4 fd %.10g | %.10g\n", rrrr4(x), (rrr3(x + h) - rrr3(x - h)) / (2 * h));
  }
  return 0;
}
