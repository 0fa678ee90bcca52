/* Forward mode over reverse vector mode: __enzyme_fwddiff of a function whose gradient runs two
 * adjoint seeds at once (enzyme_width 2 in __enzyme_autodiff); each lane's Hessian-vector product
 * against its analytic value. (The lanes' reverse sweeps restart from one tape top, which the
 * outer derivative's shadow tape must follow.) */
#include <math.h>
#include <stdio.h>
typedef struct { double c[2]; } D2;
D2 __enzyme_autodiff_w2(void *, ...);
D2 __enzyme_fwddiff_w2(void *, ...);
extern int enzyme_dup, enzyme_const, enzyme_width;

/* out[k] = sin(u[k] c) u[1-k], with a loop so that the gradient keeps values on its tape */
static void f(double *u, double c, double *out) {
  for (int k = 0; k < 2; k++) out[k] = sin(u[k] * c) * u[1 - k];
}

__attribute__((noinline)) static D2 g(double *u, double *d0, double *d1, double c, double *s0,
                                      double *s1) {
  double out[2];
  return __enzyme_autodiff_w2((void *)f, enzyme_width, 2, enzyme_dup, u, d0, d1, c, enzyme_dup,
                              out, s0, s1);
}

int main(void) {
  double u[2] = {0.5, 0.7}, ud[2] = {1, 0.5}, d0[2] = {0}, d1[2] = {0}, h0[2] = {0}, h1[2] = {0};
  double s0[2] = {1, 0}, s1[2] = {0, 1}, c = 0.3, cd = 0.2;
  D2 r = __enzyme_fwddiff_w2((void *)g, enzyme_dup, u, ud, enzyme_dup, d0, h0, enzyme_dup, d1, h1,
                             c, cd, enzyme_const, s0, enzyme_const, s1);
  double a = u[0] * c, b = u[1] * c;
  /* lane 0: grad of sin(u0 c) u1 = (c cos(a) u1, sin(a), u0 cos(a) u1), along (ud, cd) */
  double l0u0 = (cd * cos(a) - c * sin(a) * (ud[0] * c + u[0] * cd)) * u[1] + c * cos(a) * ud[1];
  double l0u1 = cos(a) * (ud[0] * c + u[0] * cd);
  double l0c = ud[0] * cos(a) * u[1] - u[0] * sin(a) * (ud[0] * c + u[0] * cd) * u[1] +
               u[0] * cos(a) * ud[1];
  /* lane 1: grad of sin(u1 c) u0 = (sin(b), c cos(b) u0, u1 cos(b) u0) */
  double l1u0 = cos(b) * (ud[1] * c + u[1] * cd);
  double l1u1 = (cd * cos(b) - c * sin(b) * (ud[1] * c + u[1] * cd)) * u[0] + c * cos(b) * ud[0];
  double l1c = ud[1] * cos(b) * u[0] - u[1] * sin(b) * (ud[1] * c + u[1] * cd) * u[0] +
               u[1] * cos(b) * ud[0];
  printf("lane0 %.12f %.12f %.12f | %.12f %.12f %.12f\n", h0[0], h0[1], r.c[0], l0u0, l0u1, l0c);
  printf("lane1 %.12f %.12f %.12f | %.12f %.12f %.12f\n", h1[0], h1[1], r.c[1], l1u0, l1u1, l1c);
  printf("grad %.12f %.12f | %.12f %.12f\n", d0[0], d1[1], c * cos(a) * u[1], c * cos(b) * u[0]);
  return 0;
}
