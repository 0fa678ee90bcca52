/* double** rows: the shadow is an array of shadow row pointers. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
static void checki(const char *name, int i, double got, double want) {
  char buf[64];
  snprintf(buf, sizeof buf, "%s[%d]", name, i);
  check(buf, got, want);
}
/* vector forward mode: lane k (entry i >= 0) of a width-N call versus a width-1 call */
static void checkv(const char *name, int lane, int i, double got, double want) {
  char buf[64];
  if (i < 0) snprintf(buf, sizeof buf, "vec_%s_%d", name, lane);
  else snprintf(buf, sizeof buf, "vec_%s_%d_%d", name, lane, i);
  check(buf, got, want);
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
int enzyme_dup, enzyme_const, enzyme_width, enzyme_dupv;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
typedef struct { double d[2]; } V2;
V2 __enzyme_fwddiff2(void *, ...) __asm__("__enzyme_fwddiff");
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }
static double dotp(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

double rows_energy(double **rows, int nr, int nc) {
  double s = 0;
  for (int i = 0; i < nr; i++)
    for (int j = 0; j < nc; j++) s += (i + 1) * rows[i][j] * rows[i][j];
  return s;
}

/* swap two row pointers, then use row 0 (a store of a pointer into a shadowed array) */
double swapped(double **rows) {
  double *t = rows[0];
  rows[0] = rows[1];
  rows[1] = t;
  return rows[0][0] * 3 + rows[1][1] * rows[1][1];
}

int main(void) {
  double a[3] = {1, 2, 3}, b[3] = {-1, 0.5, 2}, da[3] = {0}, db[3] = {0};
  double *rows[2] = {a, b}, *drows[2] = {da, db};
  __enzyme_autodiff((void *)rows_energy, enzyme_dup, rows, drows, enzyme_const, 2, enzyme_const, 3);
  for (int j = 0; j < 3; j++) checki("da", j, da[j], 2 * a[j]);
  for (int j = 0; j < 3; j++) checki("db", j, db[j], 4 * b[j]);
  /* forward tangent along (ta, tb) versus its dot with the reverse gradient */
  double ta[3], tb[3], *trows[2] = {ta, tb};
  for (int j = 0; j < 3; j++) ta[j] = rnd(j), tb[j] = rnd(3 + j);
  check("dot_rows_energy",
        __enzyme_fwddiff((void *)rows_energy, enzyme_dup, rows, trows, enzyme_const, 2,
                         enzyme_const, 3),
        dotp(ta, da, 3) + dotp(tb, db, 3));

  double c[2] = {1.5, 2.5}, e[2] = {-0.5, 4}, dc[2] = {0}, de[2] = {0};
  double *r2[2] = {c, e}, *dr2[2] = {dc, de};
  __enzyme_autodiff((void *)swapped, enzyme_dup, r2, dr2);
  /* after the swap: rows[0] = e, rows[1] = c -> 3 e0 + c1^2 */
  check("swap_de0", de[0], 3);
  check("swap_dc1", dc[1], 2 * c[1]);
  check("swap_dc0", dc[0], 0);
  check("swap_shadow_swapped", dr2[0] == de && dr2[1] == dc, 1);
  /* same dot test for swapped, from the unswapped rows again */
  double tc[2] = {rnd(6), rnd(7)}, te[2] = {rnd(8), rnd(9)};
  double *t2[2] = {tc, te};
  r2[0] = c, r2[1] = e;
  check("dot_swapped", __enzyme_fwddiff((void *)swapped, enzyme_dup, r2, t2),
        dotp(tc, dc, 2) + dotp(te, de, 2));
  check("swap_tangent_rows_swapped", t2[0] == te && t2[1] == tc, 1);
  /* vector forward mode, width 2: rows_energy with 2 shadow pointer arrays (dup); swapped
     (which swaps the row pointers in place, so the rows are reset before every call) with 2
     shadow pointer arrays side by side (dupv); versus one width-1 call per direction */
  double sa[2][3], sb[2][3], *srows[2][2] = {{sa[0], sb[0]}, {sa[1], sb[1]}};
  for (int k = 0; k < 2; k++)
    for (int j = 0; j < 3; j++) sa[k][j] = rnd(10 + 6 * k + j), sb[k][j] = rnd(13 + 6 * k + j);
  V2 e2 = __enzyme_fwddiff2((void *)rows_energy, enzyme_width, 2, enzyme_dup, rows, srows[0], srows[1],
                            enzyme_const, 2, enzyme_const, 3);
  for (int k = 0; k < 2; k++)
    checkv("rows_energy", k, -1, e2.d[k],
           __enzyme_fwddiff((void *)rows_energy, enzyme_dup, rows, srows[k], enzyme_const, 2, enzyme_const, 3));
  r2[0] = c, r2[1] = e;
  V2 w2 = __enzyme_fwddiff2((void *)swapped, enzyme_width, 2, enzyme_dupv, sizeof srows[0], r2, srows);
  for (int k = 0; k < 2; k++) {
    checkv("swapped_rows", k, -1, srows[k][0] == sb[k] && srows[k][1] == sa[k], 1);
    double *s1[2] = {sa[k], sb[k]};
    r2[0] = c, r2[1] = e;
    checkv("swapped", k, -1, w2.d[k], __enzyme_fwddiff((void *)swapped, enzyme_dup, r2, s1));
  }
  return report();
}
