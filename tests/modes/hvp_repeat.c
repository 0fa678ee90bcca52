/* Hessian-vector products of a k-means objective (forward mode over a gradient), called
   several times: the second call used to crash (the shadow of the reused tape buffer was null)
   and every call leaked the shadow tape. Checked against central differences of the gradient. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
double __enzyme_fwddiff(void *, ...);
void __enzyme_autodiff(void *, ...);
int enzyme_const, enzyme_dup, enzyme_dupnoneed;

enum { K = 3, N = 12, D = 2 };

/* sum over points of the squared distance to the nearest center (a malloc'd temporary) */
static double objective(int k, int n, int d, const double *pts, const double *ctr) {
  double *delta = malloc(sizeof(double) * d), total = 0;
  for (int i = 0; i < n; i++) {
    double nearest = INFINITY;
    for (int j = 0; j < k; j++) {
      double dist = 0;
      for (int l = 0; l < d; l++) {
        delta[l] = pts[i * d + l] - ctr[j * d + l];
        dist += delta[l] * delta[l];
      }
      nearest = dist < nearest ? dist : nearest;
    }
    total += nearest * (1 + 0.1 * nearest);
  }
  free(delta);
  return total;
}

static void gradient(const double *pts, const double *ctr, double *g) {
  for (int i = 0; i < K * D; i++) g[i] = 0;
  __enzyme_autodiff((void *)objective, enzyme_const, K, enzyme_const, N, enzyme_const, D,
                    enzyme_const, pts, enzyme_dup, ctr, g);
}

int main(void) {
  double pts[N * D], ctr[K * D], dir[K * D], g[K * D], hv[K * D];
  for (int i = 0; i < N * D; i++) pts[i] = 2 * sin(1.3 * i + 0.2);
  for (int i = 0; i < K * D; i++) { ctr[i] = cos(0.7 * i); dir[i] = 0.1 * (i + 1); }
  for (int call = 0; call < 4; call++) {
    ctr[0] += 0.01 * call;
    for (int i = 0; i < K * D; i++) hv[i] = 0;
    __enzyme_fwddiff((void *)gradient, enzyme_const, pts, enzyme_dup, ctr, dir,
                     enzyme_dupnoneed, g, hv);
    double h = 1e-6, up[K * D], down[K * D], gu[K * D], gd[K * D];
    for (int i = 0; i < K * D; i++) { up[i] = ctr[i] + h * dir[i]; down[i] = ctr[i] - h * dir[i]; }
    gradient(pts, up, gu);
    gradient(pts, down, gd);
    for (int i = 0; i < K * D; i++)
      printf("call %d Hv[%d] %.9g | %.9g\n", call, i, hv[i], (gu[i] - gd[i]) / (2 * h));
  }
  return 0;
}
