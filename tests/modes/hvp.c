#include <stdio.h>
#include <math.h>
double __enzyme_fwddiff(void*, ...);
double __enzyme_autodiff(void*, ...);
int enzyme_const, enzyme_dup, enzyme_out;
double f(const double *x, int n) { double s = 0; for (int i=0;i<n;i++) s += sin(x[i]) * x[(i+1)%n]; return s; }
void grad(const double *x, double *g, int n) { for (int i=0;i<n;i++) g[i]=0; __enzyme_autodiff((void*)f, enzyme_dup, x, g, enzyme_const, n); }
double h(double x) { return x*x*x; }
double dh(double x) { return __enzyme_autodiff((void*)h, x); }
int main() {
  double x[3] = {0.3, 0.5, 0.7}, v[3] = {1, 0, 0}, g[3], hv[3];
  __enzyme_fwddiff((void*)grad, x, v, g, hv, enzyme_const, 3);
  /* H v with v = e0: d/dx0 of g: g0 = cos(x0) x1 + sin(x2)... ; d g0/dx0 = -sin(x0) x1, d g1/dx0 = cos(x0), d g2/dx0 = 0 */
  printf("%f %f %f | %f %f %f\n", hv[0], hv[1], hv[2], -sin(x[0])*x[1], cos(x[0]), cos(x[2]));
  printf("%f | %f\n", __enzyme_fwddiff((void*)dh, 2.0, 1.0), 12.0);
  printf("%f | %f\n", __enzyme_autodiff((void*)dh, 2.0), 12.0);
}
