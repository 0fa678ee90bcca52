/* A record holding a calloc'd buffer, passed read-only to a noinline callee that clones it
   into the first rows of an array of such records and moves it (a struct copy) into the last:
   the shape of Rust's `vec![row; n]`. The caller then writes active data through every row's
   pointer, so the moved buffer needs the shadow the record never had itself (the callee's
   copy made its row's shadow pointer null: a crash before).
   f = sum_{r,c} (p[(r+c)%3] (r+1))^2, d/dp_k = 2 p_k sum_{(r+c)%3==k} (r+1)^2. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

typedef struct { long cap; double *ptr; long len; } Buf;

__attribute__((noinline)) static void from_elem(Buf *out, const Buf *elem, int n) {
  for (int i = 0; i < n - 1; i++) {
    double *q = malloc(elem->len * sizeof(double));
    memcpy(q, elem->ptr, elem->len * sizeof(double));
    out[i].cap = elem->len;
    out[i].ptr = q;
    out[i].len = elem->len;
  }
  out[n - 1] = *elem;
}

double rows_energy(const double *p, int ni, int no) {
  Buf row = {ni, calloc(ni, sizeof(double)), ni};
  Buf *rows = malloc(no * sizeof(Buf));
  from_elem(rows, &row, no);
  for (int r = 0; r < no; r++)
    for (int c = 0; c < ni; c++) rows[r].ptr[c] = p[(r + c) % 3] * (r + 1);
  double s = 0;
  for (int r = 0; r < no; r++)
    for (int c = 0; c < ni; c++) s += rows[r].ptr[c] * rows[r].ptr[c];
  for (int r = 0; r < no; r++) free(rows[r].ptr);
  free(rows);
  return s;
}

int main(void) {
  enum { NI = 4, NO = 3 };
  double p[3] = {1, 2, 3}, dp[3] = {0}, want[3] = {0};
  check("primal", rows_energy(p, NI, NO), 294);
  __enzyme_autodiff((void *)rows_energy, enzyme_dup, p, dp, enzyme_const, NI, enzyme_const, NO);
  for (int r = 0; r < NO; r++)
    for (int c = 0; c < NI; c++) want[(r + c) % 3] += 2 * p[(r + c) % 3] * (r + 1) * (r + 1);
  char name[16];
  for (int k = 0; k < 3; k++) {
    snprintf(name, sizeof name, "dp[%d]", k);
    check(name, dp[k], want[k]);
  }
  double v[3] = {0.3, -1.1, 0.7}, vdp = 0;
  for (int k = 0; k < 3; k++) vdp += v[k] * dp[k];
  check("dot_rows_energy", __enzyme_fwddiff((void *)rows_energy, enzyme_dup, p, v, enzyme_const,
                                            NI, enzyme_const, NO), vdp);
  return failed != 0;
}
