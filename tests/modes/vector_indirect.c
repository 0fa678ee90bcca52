/* Vector forward mode through an indirect call (a dispatcher over width-N derivatives) and of a\n   function returning a struct (N struct tangents packed into the marker's declared type). */
#include <stdio.h>
#include <math.h>
typedef struct { double d[4]; } V4;
typedef struct { double a, b; } P;
V4 __enzyme_fwddiff4(void*, ...) __asm__("__enzyme_fwddiff");
double __enzyme_fwddiff(void*, ...);
P __enzyme_fwddiffP(void*, ...) __asm__("__enzyme_fwddiff");
typedef struct { P d[2]; } P2;
P2 __enzyme_fwddiffP2(void*, ...) __asm__("__enzyme_fwddiff");
int enzyme_width, enzyme_dupv, enzyme_const, enzyme_dup;
static double sq(double x) { return x * x; }
static double sn(double x) { return sin(x); }
typedef double (*fn)(double);
fn table[2] = {sq, sn};
__attribute__((noinline)) double apply(int k, double x) { return table[k](x); }
double g(const double *x, int n) { double s = 0; for (int i = 0; i < n; i++) s += apply(i & 1, x[i]); return s; }
P h(double x, double y) { P p = { x * y, sin(x) + y }; return p; }
int main() {
  double x[4] = {0.3, 0.5, 0.7, 0.9}, dx[4][4] = {{1,0,0,0},{0,1,0,0},{0,0,1,0},{0,0,0,1}};
  V4 r = __enzyme_fwddiff4((void*)g, enzyme_width, 4, enzyme_dupv, sizeof(dx[0]), x, dx, enzyme_const, 4);
  for (int k = 0; k < 4; k++) printf("%f | %f\n", r.d[k], k & 1 ? cos(x[k]) : 2 * x[k]);
  P2 q = __enzyme_fwddiffP2((void*)h, enzyme_width, 2, 2.0, 1.0, 0.0, 3.0, 0.0, 1.0);
  printf("%f %f %f %f | %f %f %f %f\n", q.d[0].a, q.d[0].b, q.d[1].a, q.d[1].b, 3.0, cos(2.0), 2.0, 1.0);
}
