/* A float's bits returned as an integer, and passed as one, through function pointers: every
   function a table holds takes or returns the float whole (a double as `unsigned long long`),
   so the dispatchers over them pass its adjoint (reverse) or tangent (forward) on. The return
   was silently inactive (a zero gradient), the argument refused. Each line: enzyme-cc |
   analytic. */
#include <string.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
typedef unsigned long long u64;
__attribute__((noinline)) double from_sq(u64 b) { double v; memcpy(&v, &b, 8); return v * v; }
__attribute__((noinline)) double from_sin(u64 b) { double v; memcpy(&v, &b, 8); return sin(v); }
__attribute__((noinline)) u64 sq(double v) { u64 b; double w = v * v; memcpy(&b, &w, 8); return b; }
__attribute__((noinline)) u64 cube(double v) { u64 b; double w = v * v * v; memcpy(&b, &w, 8); return b; }
__attribute__((noinline)) static double *put(u64 bits) {    /* the bits stored as a double */
  double *d = malloc(sizeof(double));
  memcpy(d, &bits, sizeof bits);
  return d;
}
__attribute__((noinline)) static double *put2(u64 bits) {
  double *d = malloc(sizeof(double));
  memcpy(d, &bits, sizeof bits);
  *d *= 2;
  return d;
}
double (*readers[2])(u64) = {from_sq, from_sin};
double *(*volatile keepers[2])(u64) = {put, put2};
u64 (*makers[2])(double) = {sq, cube};
double f(double x, int k) {
  u64 b = makers[k](x);          /* a float's bits returned through a function pointer, */
  double v; memcpy(&v, &b, 8);
  u64 c; double y = 3 * x; memcpy(&c, &y, 8);
  double *d = keepers[k](c);     /* and passed through one */
  double r = v + readers[k](c) + *d;
  free(d);
  return r;
}
int main(void) {
  for (int k = 0; k < 2; k++) {
    double x = 0.7;
    double want = k ? 3 * x * x + 3 * cos(3 * x) + 6 : 2 * x + 18 * x + 3;
    printf("reverse k=%d: %.10g | %.10g\n", k, __enzyme_autodiff((void *)f, x, k), want);
    printf("forward k=%d: %.10g | %.10g\n", k, __enzyme_fwddiff((void *)f, x, 1.0, k), want);
  }
  return 0;
}
