/* A C program differentiating Fortran kernels (kernel.f90, bind(c)); gradients are printed next
   to their exact values. Build: make (enzyme-cc compiles, enzyme-fc compiles and links). */
#include <math.h>
#include <stdio.h>

double weighted_sumsq(const double *x, int n);
void couple(const double *x, double *y, int n);

int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);

#define N 4

int main(void) {
  double x[N] = {1.0, -2.0, 0.5, 3.0}, dx[N] = {0};
  __enzyme_autodiff((void *)weighted_sumsq, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++)
    printf("d weighted_sumsq/d x%d  %14.8f  exact %14.8f\n", i, dx[i], 2.0 * (i + 1) * x[i]);

  /* vector-Jacobian product with w: d/dx of sum_i w[i] y[i] */
  double y[N], w[N] = {1.0, 2.0, -1.0, 0.5}, gx[N] = {0};
  __enzyme_autodiff((void *)couple, enzyme_dup, x, gx, enzyme_dup, y, w, enzyme_const, N);
  double exact[N] = {0};
  double w2[N] = {1.0, 2.0, -1.0, 0.5};   /* the reverse pass zeroes the seed w, as Enzyme does */
  for (int i = 0; i + 1 < N; i++) {
    exact[i] += w2[i] * sin(x[i + 1]);
    exact[i + 1] += w2[i] * x[i] * cos(x[i + 1]);
  }
  exact[N - 1] += w2[N - 1] * 2 * x[N - 1];
  for (int i = 0; i < N; i++)
    printf("d (w.couple)/d x%d      %14.8f  exact %14.8f\n", i, gx[i], exact[i]);
  return 0;
}
