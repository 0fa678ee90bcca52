/* Gradients of the two library functions, each printed next to its exact value. */
#include <math.h>
#include <stdio.h>
#include "kernels.h"

int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);

#define N 4

static void rosenbrock_exact(const double *x, int n, double *g) {
  for (int i = 0; i < n; i++) g[i] = 0;
  for (int i = 0; i + 1 < n; i++) {
    double r = x[i + 1] - x[i] * x[i];
    g[i] += -400 * x[i] * r - 2 * (1 - x[i]);
    g[i + 1] += 200 * r;
  }
}

static void chain_exact(const double *xy, int n, double k, double *g) {
  for (int i = 0; i < 2 * n; i++) g[i] = 0;
  for (int i = 0; i + 1 < n; i++) {
    double dx = xy[2 * i + 2] - xy[2 * i], dy = xy[2 * i + 3] - xy[2 * i + 1];
    double len = sqrt(dx * dx + dy * dy), c = k * (len - 1) / len;
    g[2 * i] -= c * dx, g[2 * i + 1] -= c * dy;
    g[2 * i + 2] += c * dx, g[2 * i + 3] += c * dy;
  }
}

int main(void) {
  double x[N] = {-1.2, 1.0, 0.5, 2.0}, dx[N] = {0}, gx[N];
  __enzyme_autodiff((void *)rosenbrock, enzyme_dup, x, dx, enzyme_const, N);
  rosenbrock_exact(x, N, gx);
  for (int i = 0; i < N; i++)
    printf("d rosenbrock/d x%d      %14.8f  exact %14.8f\n", i, dx[i], gx[i]);

  double xy[2 * N] = {0, 0, 1.5, 0.2, 2.1, 1.4, 3.0, 1.0}, dxy[2 * N] = {0}, gxy[2 * N];
  double k = 3.0;
  __enzyme_autodiff((void *)chain_energy, enzyme_dup, xy, dxy, enzyme_const, N, enzyme_const, k);
  chain_exact(xy, N, k, gxy);
  for (int i = 0; i < 2 * N; i++)
    printf("d chain_energy/d xy%d   %14.8f  exact %14.8f\n", i, dxy[i], gxy[i]);
  return 0;
}
