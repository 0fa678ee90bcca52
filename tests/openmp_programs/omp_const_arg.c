/* a region reading an array passed as enzyme_const through a captured pointer (no shadow: a
   null shadow for it made the reverse sweep fault), with a time loop swapping two buffers. */
#include <stdlib.h>
#include "omp_check.h"
#define N 48
double heat(const double *u0, double *a, double *b, const double *w, int n) {
  for (int k = 0; k < n; k++) a[k] = u0[k];
  for (int t = 0; t < 3; t++) {
#pragma omp parallel for
    for (int i = 0; i < n; i++) {
      double u = a[i], l = i > 0 ? a[i - 1] : 0, r = i < n - 1 ? a[i + 1] : 0;
      b[i] = u + 0.2 * (l + r - 2 * u) - 0.1 * u * u * u;
    }
    double *s = a; a = b; b = s;
  }
  double loss = 0;
#pragma omp parallel for reduction(+ : loss)
  for (int k = 0; k < n; k++) loss += w[k] * a[k];
  return loss;
}
double __enzyme_autodiff_d(void *, ...) __asm__("__enzyme_autodiff");
double __enzyme_fwddiff_d(void *, ...) __asm__("__enzyme_fwddiff");
int main(void) {
  static double u[N], du[N], a[N], da[N], b[N], db[N], w[N], v[N], ta[N], tb[N];
  for (int k = 0; k < N; k++) { u[k] = 0.5 + 0.4 * rnd(k); w[k] = rnd(50 + k); v[k] = rnd(90 + k); }
  __enzyme_autodiff_d((void *)heat, enzyme_dup, u, du, enzyme_dup, a, da, enzyme_dup, b, db,
                      enzyme_const, w, enzyme_const, N);
  double sum = 0, vg = 0;
  for (int k = 0; k < N; k++) {
    double h = 1e-6;
    u[k] += h; double fp = heat(u, a, b, w, N);
    u[k] -= 2 * h; double fm = heat(u, a, b, w, N);
    u[k] += h;
    check("rev_fd", k, du[k], (fp - fm) / (2 * h), 1e-6);
    sum += du[k];
    vg += v[k] * du[k];
  }
  double jv = __enzyme_fwddiff_d((void *)heat, enzyme_dup, u, v, enzyme_dup, a, ta, enzyme_dup, b,
                                 tb, enzyme_const, w, enzyme_const, N);
  check("dot", 0, jv, vg, 1e-10);
  printf("SUM %.17g %.17g\n", sum, jv);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
