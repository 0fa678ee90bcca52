/* Loop nests as -Os/-Oz leave them (no loop rotation): an inner loop whose bounds are read from
   memory exits straight back to the outer loop's header, so one edge both leaves the inner loop
   and closes the outer one. The reverse sweep re-enters the inner loop on that edge and needs
   the inner loop's iteration count there (a silently zero gradient at -Oz before). Each shape
   is checked in reverse mode (plain and split) against its analytic gradient. */
#include <stdio.h>
#include <stdlib.h>
void __enzyme_autodiff(void *, ...);
void *__enzyme_augmentfwd(void *, ...);
void __enzyme_reverse(void *, ...);
int enzyme_dup, enzyme_const, enzyme_tape;

/* CSR row sums into an output argument */
__attribute__((noinline)) void rowsum(const double *val, const int *rp, int n, double *y) {
  for (int i = 0; i < n; i++)
    for (int k = rp[i]; k < rp[i + 1]; k++) y[i] += val[k];
}

/* a triangular triple nest, the innermost bound from memory: sum_i sum_{j<m[i]} sum_{k<=j} x_j x_k */
__attribute__((noinline)) double tri(const double *x, const int *m, int n) {
  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m[i]; j++)
      for (int k = 0; k <= j; k++) s += x[j] * x[k];
  return s;
}

/* sparse matrix-vector product y = A x, then 0.5 |y|^2, with a row left empty */
__attribute__((noinline)) double spmv_norm(const double *val, const int *col, const int *rp, int n,
                                           const double *x, double *y) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    double t = 0;
    for (int k = rp[i]; k < rp[i + 1]; k++) t += val[k] * x[col[k]];
    y[i] = t;
    s += 0.5 * t * t;
  }
  return s;
}

/* while loops with an early exit inside the inner one */
__attribute__((noinline)) double capped(const double *x, const int *len, int n, double cap) {
  double s = 0;
  int i = 0, k = 0;
  while (i < n) {
    int j = 0;
    while (j < len[i]) {
      if (x[k + j] > cap) break;
      s += x[k + j] * x[k + j];
      j++;
    }
    k += len[i];
    i++;
  }
  return s;
}

int main(void) {
  double val[5] = {1, 2, 3, 4, 5}, dval[5] = {0};
  int rp[4] = {0, 2, 2, 5};
  double y[3] = {0}, dy[3] = {1, 10, 100};
  __enzyme_autodiff((void *)rowsum, enzyme_dup, val, dval, enzyme_const, rp, enzyme_const, 3,
                    enzyme_dup, y, dy);
  printf("rowsum %g %g %g %g %g | 1 1 100 100 100\n", dval[0], dval[1], dval[2], dval[3], dval[4]);

  /* the split form: the same derivative through a tape */
  double y2[3] = {0}, dy2[3] = {1, 10, 100}, dval2[5] = {0};
  void *t = __enzyme_augmentfwd((void *)rowsum, enzyme_dup, val, dval2, enzyme_const, rp,
                                enzyme_const, 3, enzyme_dup, y2, dy2);
  __enzyme_reverse((void *)rowsum, enzyme_dup, val, dval2, enzyme_const, rp, enzyme_const, 3,
                   enzyme_dup, y2, dy2, enzyme_tape, t);
  printf("rowsum split %g %g %g %g %g | 1 1 100 100 100\n", dval2[0], dval2[1], dval2[2],
         dval2[3], dval2[4]);

  double x[4] = {0.5, -1.5, 2.0, 0.25}, dx[4] = {0};
  int m[3] = {2, 0, 4};
  __enzyme_autodiff((void *)tri, enzyme_dup, x, dx, enzyme_const, m, enzyme_const, 3);
  /* d/dx_p of sum over rows r of sum_{j<m_r} sum_{k<=j} x_j x_k */
  double want[4] = {0};
  for (int r = 0; r < 3; r++)
    for (int j = 0; j < m[r]; j++)
      for (int k = 0; k <= j; k++) { want[j] += x[k]; want[k] += x[j]; }
  for (int p = 0; p < 4; p++) printf("tri %g | %g\n", dx[p], want[p]);

  double a[5] = {2, -1, 3, 0.5, 1.5}, da[5] = {0};
  int col[5] = {0, 2, 1, 2, 0}, arp[4] = {0, 2, 2, 5};
  double xs[3] = {1, 2, -1}, dxs[3] = {0}, ys[3] = {0}, dys[3] = {0};
  __enzyme_autodiff((void *)spmv_norm, enzyme_dup, a, da, enzyme_const, col, enzyme_const, arp,
                    enzyme_const, 3, enzyme_dup, xs, dxs, enzyme_dup, ys, dys);
  /* y0 = 2*1 - 1*(-1) = 3; y1 = 0; y2 = 3*2 + 0.5*(-1) + 1.5*1 = 7 */
  printf("spmv da %g %g %g %g %g | 3 -3 14 -7 7\n", da[0], da[1], da[2], da[3], da[4]);
  printf("spmv dx %g %g %g | 16.5 21 0.5\n", dxs[0], dxs[1], dxs[2]);

  double c[6] = {1, 5, 2, 0.5, -3, 4}, dc[6] = {0};
  int len[3] = {2, 1, 3};
  __enzyme_autodiff((void *)capped, enzyme_dup, c, dc, enzyme_const, len, enzyme_const, 3, 3.0);
  /* row 0: 1 counted, 5 stops it; row 1: 2; row 2: 0.5, -3, then 4 stops it */
  printf("capped %g %g %g %g %g %g | 2 0 4 1 -6 0\n", dc[0], dc[1], dc[2], dc[3], dc[4], dc[5]);
  return 0;
}
