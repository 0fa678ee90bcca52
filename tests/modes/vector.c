#include <stdio.h>
#include <math.h>
typedef struct { double d[3]; } T3;
T3 __enzyme_fwddiff3(void*, ...) __asm__("__enzyme_fwddiff");
double __enzyme_fwddiff(void*, ...);
int enzyme_width, enzyme_dupv, enzyme_const, enzyme_dup;
double f(double a, const double *x) { return a * sin(x[0]) * x[1]; }
int main() {
  double x[2] = {0.4, 1.5};
  double dx[3][2] = {{1,0},{0,1},{0,0}};
  T3 t = __enzyme_fwddiff3((void*)f, enzyme_width, 3, 2.0, 0.0, 0.0, 1.0, enzyme_dupv, sizeof(dx[0]), x, dx);
  printf("%f %f %f | %f %f %f\n", t.d[0], t.d[1], t.d[2], 2*cos(0.4)*1.5, 2*sin(0.4), sin(0.4)*1.5);
}
