/* enzyme_dupnoneed with enzyme_width: the output buffer's N shadows get the N directions. */
#include <stdio.h>
int enzyme_width, enzyme_dupnoneed, enzyme_dup;
double both(double *y, const double *x) { y[0] = x[0] * x[0] * x[1]; y[1] = x[1] / x[0]; return 3 * x[0]; }
typedef struct { double a, b; } Two;
Two __enzyme_fwddiff(void *, ...);
int main(void) {
  double x[2] = {1.5, -0.5}, o[2], do1[2] = {0}, do2[2] = {0}, e1[2] = {1, 0}, e2[2] = {0, 1};
  Two t = __enzyme_fwddiff((void *)both, enzyme_width, 2, enzyme_dupnoneed, o, do1, do2, enzyme_dup, x, e1, e2);
  printf("dy0 %f %f | %f %f\n", do1[0], do2[0], 2 * x[0] * x[1], x[0] * x[0]);
  printf("dy1 %f %f | %f %f\n", do1[1], do2[1], -x[1] / (x[0] * x[0]), 1 / x[0]);
  printf("ret %f %f | 3 0\n", t.a, t.b);
  return 0;
}
