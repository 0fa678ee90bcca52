/* A dynamic array grown by realloc in a loop next to other heap buffers, and a buffer grown
   by a noinline realloc helper. The gradient runs several times: a stale shadow byte from an
   earlier call (realloc keeps the usable size of the old block) would change the later ones. */
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

double pushes(const double *x, int n) {
  double *w = malloc(n * sizeof(double));
  double *t = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) {
    w[i] = 2 * x[i];
    t[i] = x[i] * x[i];
  }
  int cap = 1, len = 0;
  double *buf = malloc(cap * sizeof(double));
  for (int i = 0; i < n; i++) {
    if (len == cap) {
      cap *= 2;
      buf = realloc(buf, cap * sizeof(double));
    }
    buf[len++] = w[i] * t[i];       /* 2 x^3 */
  }
  double s = 0;
  for (int i = 0; i < len; i++) s += buf[i];
  free(buf);
  free(t);
  free(w);
  return s;
}

static __attribute__((noinline)) double *grow(double *p, int n) {
  return realloc(p, n * sizeof *p);
}

double chained(const double *x, int n) {
  double *b = malloc(sizeof(double));
  b[0] = x[0];
  b = grow(b, n);
  for (int i = 1; i < n; i++) b[i] = x[i] * b[i - 1];   /* prefix products */
  double s = b[n - 1] + b[0];
  free(b);
  return s;
}

int main(void) {
  enum { N = 6 };
  double x[N] = {1, 2, -1.5, 0.5, 0.75, -2};
  for (int call = 0; call < 4; call++) {
    double dx[N] = {0}, v[N];
    __enzyme_autodiff((void *)pushes, enzyme_dup, x, dx, enzyme_const, N);
    for (int i = 0; i < N; i++) checki("pushes", i, dx[i], 6 * x[i] * x[i]);
    for (int i = 0; i < N; i++) v[i] = rnd(i + call);
    check("dot_pushes", __enzyme_fwddiff((void *)pushes, enzyme_dup, x, v, enzyme_const, N),
          dotp(v, dx, N));
    double dc[N] = {0}, all = 1;
    __enzyme_autodiff((void *)chained, enzyme_dup, x, dc, enzyme_const, N);
    for (int i = 0; i < N; i++) all *= x[i];
    for (int i = 0; i < N; i++) checki("chained", i, dc[i], all / x[i] + (i == 0));
    check("dot_chained", __enzyme_fwddiff((void *)chained, enzyme_dup, x, v, enzyme_const, N),
          dotp(v, dc, N));
  }
  return report();
}
