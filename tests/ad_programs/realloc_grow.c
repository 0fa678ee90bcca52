/* A dynamic array grown with realloc while filling it (the usual C "vector" idiom). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

double grown(const double *x, int n) {
  int cap = 2, len = 0;
  double *buf = malloc(cap * sizeof(double));
  for (int i = 0; i < n; i++) {
    if (len == cap) {
      cap *= 2;
      buf = realloc(buf, cap * sizeof(double));
    }
    buf[len++] = x[i] * x[i];
  }
  double s = 0;
  for (int i = 0; i < len; i++) s += buf[i] * x[i];
  free(buf);
  return s;
}

int main(void) {
  enum { N = 7 };
  double x[N] = {0.5, -1, 2, 0.25, 1.5, -0.5, 0.75}, dx[N] = {0};
  __enzyme_autodiff((void *)grown, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("grown", i, dx[i], 3 * x[i] * x[i]);
  double v[N];   /* forward J.v versus v . (reverse gradient) */
  for (int i = 0; i < N; i++) v[i] = rnd(i);
  check("dot_grown", __enzyme_fwddiff((void *)grown, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dx, N));
  /* vector forward mode: 2 directions (rows of vv, dupv with a row stride) versus width 1 */
  double vv[2][N];
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < N; i++) vv[k][i] = rnd(N + k * N + i);
  V2 t2 = __enzyme_fwddiff2((void *)grown, enzyme_width, 2, enzyme_dupv, sizeof vv[0], x, vv,
                            enzyme_const, N);
  for (int k = 0; k < 2; k++)
    checkv("grown", k, -1, t2.d[k], __enzyme_fwddiff((void *)grown, enzyme_dup, x, vv[k], enzyme_const, N));
  return report();
}
