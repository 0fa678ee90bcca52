/* A function-local static scratch buffer (a mutable global) written and read inside the
   differentiated function, a common way to avoid allocation in C numerical code. */
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
typedef struct { double d[4]; } V4;
V4 __enzyme_fwddiff4(void *, ...) __asm__("__enzyme_fwddiff");
typedef struct { double d[2]; } V2;
V2 __enzyme_fwddiff2(void *, ...) __asm__("__enzyme_fwddiff");
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }
static double dotp(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

double scratch_sum(const double *x, int n) {
  static double work[16];
  for (int i = 0; i < n; i++) work[i] = exp(x[i]);
  double s = 0;
  for (int i = 0; i < n; i++) s += work[i] * x[i];
  return s;
}

int main(void) {
  enum { N = 5 };
  double x[N] = {0.5, -1, 2, 0.25, 1.5}, dx[N] = {0};
  __enzyme_autodiff((void *)scratch_sum, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("dx", i, dx[i], exp(x[i]) * (1 + x[i]));
  double v[N];   /* forward J.v versus v . (reverse gradient) */
  for (int i = 0; i < N; i++) v[i] = rnd(i);
  check("dot_scratch_sum", __enzyme_fwddiff((void *)scratch_sum, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dx, N));
  /* vector forward mode: 4 directions by dupv, then 2 by dup, versus one width-1 call each */
  double v4[4][N];
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < N; i++) v4[k][i] = rnd(N + k * N + i);
  V4 t4 = __enzyme_fwddiff4((void *)scratch_sum, enzyme_width, 4, enzyme_dupv, sizeof v4[0], x, v4,
                            enzyme_const, N);
  for (int k = 0; k < 4; k++)
    checkv("scratch_sum", k, -1, t4.d[k],
           __enzyme_fwddiff((void *)scratch_sum, enzyme_dup, x, v4[k], enzyme_const, N));
  V2 t2 = __enzyme_fwddiff2((void *)scratch_sum, enzyme_width, 2, enzyme_dup, x, v4[3], v4[1],
                            enzyme_const, N - 1);
  for (int k = 0; k < 2; k++)
    checkv("scratch_sum_n4", k, -1, t2.d[k],
           __enzyme_fwddiff((void *)scratch_sum, enzyme_dup, x, v4[3 - 2 * k], enzyme_const, N - 1));
  return report();
}
