/* memmove shifting an array in place (overlapping copy), inside a time loop: a delay line. */
#include <math.h>
#include <stdio.h>
#include <string.h>
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

#define TAPS 4
double fir(const double *in, int n, const double *w) {
  double line[TAPS] = {0};
  double out = 0;
  for (int t = 0; t < n; t++) {
    memmove(line + 1, line, (TAPS - 1) * sizeof(double));
    line[0] = in[t];
    double y = 0;
    for (int k = 0; k < TAPS; k++) y += w[k] * line[k];
    out += y * y;
  }
  return out;
}

int main(void) {
  enum { N = 6 };
  double in[N] = {1, -0.5, 0.25, 2, -1, 0.5}, din[N] = {0}, w[TAPS] = {0.5, -0.25, 0.125, 1};
  __enzyme_autodiff((void *)fir, enzyme_dup, in, din, enzyme_const, N, enzyme_const, w);
  /* y_t = sum_k w_k in_{t-k}; d out / d in_j = sum_t 2 y_t w_{t-j} */
  double y[N];
  for (int t = 0; t < N; t++) {
    y[t] = 0;
    for (int k = 0; k < TAPS && k <= t; k++) y[t] += w[k] * in[t - k];
  }
  for (int j = 0; j < N; j++) {
    double want = 0;
    for (int t = j; t < N && t - j < TAPS; t++) want += 2 * y[t] * w[t - j];
    checki("din", j, din[j], want);
  }
  double v[N];   /* forward J.v versus v . (reverse gradient) */
  for (int i = 0; i < N; i++) v[i] = rnd(i);
  check("dot_fir",
        __enzyme_fwddiff((void *)fir, enzyme_dup, in, v, enzyme_const, N, enzyme_const, w),
        dotp(v, din, N));
  /* vector forward mode: 2 directions in (in, w): in by dupv, w by dup, versus width 1 */
  double vin[2][N], vw[2][TAPS];
  for (int k = 0; k < 2; k++) {
    for (int i = 0; i < N; i++) vin[k][i] = rnd(N + 10 * k + i);
    for (int i = 0; i < TAPS; i++) vw[k][i] = rnd(N + 10 * k + N + i);
  }
  V2 t = __enzyme_fwddiff2((void *)fir, enzyme_width, 2, enzyme_dupv, sizeof vin[0], in, vin,
                           enzyme_const, N, enzyme_dup, w, vw[0], vw[1]);
  for (int k = 0; k < 2; k++)
    checkv("fir", k, -1, t.d[k],
           __enzyme_fwddiff((void *)fir, enzyme_dup, in, vin[k], enzyme_const, N, enzyme_dup, w, vw[k]));
  return report();
}
