#include <stdlib.h>
#include <stdio.h>
#include <math.h>
double mylog(double x) { return log(x); }
void* __enzyme_function_like[2] = {(void*)mylog, (void*)"log"};
__attribute__((annotate("enzyme_inactive"))) double noisy(double x) { printf("x=%f\n", x); return x * 3; }
double sq(double x) { return x*x; }
double aug_sq(double x) { return x*x; }
double grad_sq(double x, double dret) { return 100*x*dret; }
void* __enzyme_register_gradient_sq[3] = {(void*)sq, (void*)aug_sq, (void*)grad_sq};
double __enzyme_autodiff(void*, ...);
double __enzyme_fwddiff(void*, ...);
typedef struct { void *tape; double r; } AugR;
double cube(double x) { return x*x*x; }
AugR aug_cube(double x) { AugR a = {malloc(8), x*x*x}; *(double*)a.tape = 3*x*x; return a; }
double grad_cube(double x, double dret, void *tape) { double g = *(double*)tape; free(tape); return g*dret; }
void* __enzyme_register_gradient_cube[3] = {(void*)cube, (void*)aug_cube, (void*)grad_cube};
double fwd_cube(double x, double dx) { return 3*x*x*dx + 1000; }
void* __enzyme_register_derivative_cube[2] = {(void*)cube, (void*)fwd_cube};
double f(double x) { return mylog(x) * sq(x) + noisy(x) + cube(x); }
double g(double x) { return cube(x); }
int main() { double x = 2.0;
  printf("%f | %f\n", __enzyme_autodiff((void*)f, x), (1/x)*x*x + log(x)*100*x + 0 + 3*x*x);
  printf("%f | %f\n", __enzyme_fwddiff((void*)g, x, 1.0), 3*x*x + 1000);
}
