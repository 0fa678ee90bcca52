/* A record of a pointer and a double returned by value from a function kept as a call, in the
   other modes: forward mode with two lanes, a Hessian-vector product (forward over reverse)
   through it, and forward over reverse through a custom gradient whose augmented forward
   returns its heap tape beside the primal (the tape's shadow was dropped: a zero term). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
typedef struct { double d[2]; } D2;
D2 __enzyme_fwddiff2(void *, ...) __asm__("__enzyme_fwddiff");
double __enzyme_fwddiff(void *, ...);
double __enzyme_autodiff(void *, ...);
int enzyme_const, enzyme_dup, enzyme_dupv, enzyme_width;

typedef struct { double *at; double sum; } View;
__attribute__((noinline)) View view(double *x, int n) {
  View r = {x + 1, 0};
  for (int i = 0; i < n; i++) r.sum += x[i] * x[i];
  return r;
}
/* f = S x1 + 3 x2 with S = sum x_i^2 */
double f(double *x, int n) {
  View r = view(x, n);
  return r.sum * r.at[0] + r.at[1] * 3.0;
}
void grad(double *x, double *g, int n) {
  for (int i = 0; i < n; i++) g[i] = 0;
  __enzyme_autodiff((void *)f, enzyme_dup, x, g, enzyme_const, n);
}

__attribute__((noinline)) double soft(double x) { return sqrt(x * x + 0.01); }
typedef struct { void *tape; double primal; } Aug;
Aug soft_aug(double x) {
  Aug r;
  double *t = malloc(sizeof(double));
  r.primal = sqrt(x * x + 0.01);
  *t = x / r.primal;
  r.tape = t;
  return r;
}
double soft_rev(double x, double d, void *tape) {
  double g = *(double *)tape;
  free(tape);
  return g * d;
}
void *__enzyme_register_gradient_soft[3] = {(void *)soft, (void *)soft_aug, (void *)soft_rev};
double g(double x) { return soft(x) * x; }
double dg(double x) { return __enzyme_autodiff((void *)g, x); }

int main(void) {
  double x[4] = {1, 2, 3, 4}, S = 30;
  /* gradient: 2 x_i x1, plus S at i = 1 and 3 at i = 2 */
  double dx[8] = {0};
  dx[1] = 1;
  dx[4 + 2] = 1;
  D2 t = __enzyme_fwddiff2((void *)f, enzyme_width, 2, enzyme_dupv, sizeof(double) * 4, x, dx,
                           enzyme_const, 4);
  printf("%f %f | %f %f\n", t.d[0], t.d[1], 2 * x[1] * x[1] + S, 2 * x[2] * x[1] + 3);
  /* H e1: d/dx1 of (2 x_i x1 + [i=1] S): 2 x_i + [i=1] (2 x1 + 2 x1) */
  double v[4] = {0, 1, 0, 0}, gr[4], hv[4];
  __enzyme_fwddiff((void *)grad, enzyme_dup, x, v, enzyme_dup, gr, hv, enzyme_const, 4);
  printf("%f %f %f %f | %f %f %f %f\n", hv[0], hv[1], hv[2], hv[3], 2 * x[0],
         2 * x[1] + 4 * x[1], 2 * x[2], 2 * x[3]);
  /* g'' = soft'' x + 2 soft' with soft' = x / s, soft'' = 0.01 / s^3 */
  double y = 0.2, s = sqrt(y * y + 0.01);
  printf("%f | %f\n", __enzyme_fwddiff((void *)dg, y, 1.0), 0.01 / (s * s * s) * y + 2 * y / s);
  return 0;
}
