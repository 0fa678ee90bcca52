#include <stdio.h>
#include <math.h>
#include <stdlib.h>
double __enzyme_fwddiff(void*, ...);
double __enzyme_autodiff(void*, ...);
int enzyme_const, enzyme_dup;
double sq(double x) { return x * x * sin(x); }
__attribute__((noinline)) double inner(const double *x, int n) { double s=0; for (int i=0;i<n;i++) s += x[i]*x[i]; return sqrt(s); }
double f(const double *x, int n) { double *t = malloc(n*8); for (int i=0;i<n;i++) t[i] = exp(x[i]); double s = inner(t, n) + inner(x, n); free(t); return s; }
void vec(double *out, const double *in, int n) { for (int i=0;i<n;i++) out[i] = in[i]*in[(i+1)%n]; }
int main() {
  double x = 1.3;
  printf("%f | %f\n", __enzyme_fwddiff((void*)sq, x, 1.0), 2*x*sin(x) + x*x*cos(x));
  double xs[3] = {0.1,0.2,0.3}, v[3] = {1,-2,0.5}, g[3] = {0};
  double jv = __enzyme_fwddiff((void*)f, xs, v, enzyme_const, 3);
  __enzyme_autodiff((void*)f, xs, g, enzyme_const, 3);
  printf("Jv %f  <g,v> %f\n", jv, g[0]*v[0]+g[1]*v[1]+g[2]*v[2]);
  double out[3], dout[3];
  __enzyme_fwddiff((void*)vec, out, dout, xs, v, 3);
  for (int i=0;i<3;i++) printf("%f | %f\n", dout[i], v[i]*xs[(i+1)%3] + xs[i]*v[(i+1)%3]);
}
