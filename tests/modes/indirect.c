#include <stdio.h>
#include <math.h>
double __enzyme_autodiff(void*, ...);
double __enzyme_fwddiff(void*, ...);
int enzyme_const, enzyme_dup;
typedef void (*rhs_t)(const double *y, double *dy, double k);
static void decay(const double *y, double *dy, double k) { dy[0] = -k * y[0] * y[1]; dy[1] = sin(y[0]); }
static void grow(const double *y, double *dy, double k) { dy[0] = k * y[0]; dy[1] = y[1] * y[0]; }
__attribute__((noinline)) void euler(rhs_t f, double *y, double k, int steps) { double dy[2]; for (int s=0;s<steps;s++) { f(y, dy, k); y[0] += 0.01*dy[0]; y[1] += 0.01*dy[1]; } }
double run(double *y, double k, int which) { euler(which ? grow : decay, y, k, 100); return y[0] + y[1]; }
int main2();
int main() { main2();
  for (int which = 0; which < 2; which++) {
    double y[2] = {1.0, 0.5}, dy[2] = {0}, k = 0.7;
    double dk = __enzyme_autodiff((void*)run, y, dy, k, enzyme_const, which);
    double h = 1e-6, a[2] = {1.0, 0.5}, b[2] = {1.0, 0.5};
    double fd = (run(a, k + h, which) - run(b, k - h, which)) / (2*h);
    double a0[2] = {1.0+h, 0.5}, b0[2] = {1.0-h, 0.5};
    double fd0 = (run(a0, k, which) - run(b0, k, which)) / (2*h);
    printf("which %d: dk %f fd %f ; dy0 %f fd %f\n", which, dk, fd, dy[0], fd0);
  }
}
double fwd(double k) { double y[2] = {1.0, 0.5}; return run(y, k, 0); }
int main2() { double a[2] = {1.0, 0.5}, b[2] = {1.0, 0.5}; printf("fwd %f | %f\n", __enzyme_fwddiff((void*)fwd, 0.7, 1.0), (run(a, 0.7 + 1e-6, 0) - run(b, 0.7 - 1e-6, 0)) / 2e-6); return 0; }
