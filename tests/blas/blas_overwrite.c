/* Level-3 BLAS through OpenBLAS where the reverse sweep cannot read the matrices in place: the
   calls sit in a function of their own (split mode: its reverse runs in another function) and
   the matrices are overwritten after the calls, so the forward sweep must save them. cblas_dgemm
   and cblas_dgemv row- and column-major, transposed or not; OpenBLAS's Fortran dtrsm_ and dsyrk_ (derivatives by
   enzyme-cc's own kernels). Reverse against central differences, forward against reverse. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
int enzyme_dup;
void dtrsm_(const char *, const char *, const char *, const char *, const int *, const int *,
            const double *, const double *, const int *, double *, const int *);
void dsyrk_(const char *, const char *, const int *, const int *, const double *, const double *,
            const int *, const double *, double *, const int *);
enum { S = 5, SS = S * S };

__attribute__((noinline)) static void step(double *a, double *b, double *c, int k) {
  int n = S, m = 4;
  double one = 1.0, half = 0.5, two = 2.0;
  cblas_dgemm(k & 1 ? CblasRowMajor : CblasColMajor, k & 2 ? CblasTrans : CblasNoTrans,
              CblasNoTrans, 4, 3, S, 0.8, a, S, b, S, 1.2, c, S);
  for (int i = 0; i < SS; i++) a[i] *= 0.9;     /* A and B change before the reverse */
  for (int i = 0; i < SS; i++) b[i] = 0.5 * b[i] + 0.1 * c[i];
  for (int i = 0; i < S; i++) a[i * S + i] += 3.0;
  dtrsm_(k & 1 ? "R" : "L", k & 2 ? "U" : "L", k & 1 ? "T" : "N", "N", &m, &n, &half, a, &n, c, &n);
  dsyrk_(k & 2 ? "U" : "L", k & 1 ? "T" : "N", &n, &m, &two, c, &n, &one, b, &n);
  cblas_dgemv(k & 1 ? CblasRowMajor : CblasColMajor, k & 2 ? CblasTrans : CblasNoTrans, 4, 3, 0.7,
              c, S, b, 1, 0.9, a + 1, 2);     /* reads c and b, which change next */
  for (int i = 0; i < SS; i++) c[i] = 0;
  b[3] *= 1.1;
}

static double f(const double *a0, const double *b0) {
  double a[SS], b[SS], c[SS], s = 0;
  memcpy(a, a0, sizeof a);
  memcpy(b, b0, sizeof b);
  for (int i = 0; i < SS; i++) c[i] = 0.1 * i;
  for (int k = 0; k < 4; k++) step(a, b, c, k);
  for (int i = 0; i < SS; i++) s += sin(i + 1.0) * b[i] + cos(i + 2.0) * a[i];
  return s;
}

static int bad;
static void chk(const char *w, int i, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1 + fabs(want));
  if (!ok) bad++;
  printf("CHECK %s[%d] %.10g %.10g%s\n", w, i, got, want, ok ? "" : " <-- FAILED");
}

int main(void) {
  double a[SS], b[SS], da[SS] = {0}, db[SS] = {0}, va[SS], vb[SS], dot = 0, h = 1e-6;
  for (int i = 0; i < SS; i++) { a[i] = sin(1.0 + i); b[i] = cos(0.5 + i); va[i] = sin(3.0 * i); vb[i] = cos(2.0 * i); }
  __enzyme_autodiff((void *)f, enzyme_dup, a, da, enzyme_dup, b, db);
  for (int i = 0; i < SS; i++) {
    double s = a[i]; a[i] = s + h; double p = f(a, b); a[i] = s - h; double q = f(a, b); a[i] = s;
    chk("dA", i, da[i], (p - q) / (2 * h));
    s = b[i]; b[i] = s + h; p = f(a, b); b[i] = s - h; q = f(a, b); b[i] = s;
    chk("dB", i, db[i], (p - q) / (2 * h));
    dot += va[i] * da[i] + vb[i] * db[i];
  }
  chk("fwd", 0, __enzyme_fwddiff((void *)f, enzyme_dup, a, va, enzyme_dup, b, vb), dot);
  if (bad) printf("FAILED: %d\n", bad);
  return bad != 0;
}
