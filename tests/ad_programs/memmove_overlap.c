/* Overlapping memmove of active data: shifts left (destination below the source) and right by
   several offsets, within one array. The adjoint must take the destination's adjoints out
   before adding them into the source's (a plain element loop piles them up at one end). */
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

/* shift by k (k < 0: left, memmove(m, m - k, ...)), then a weighted sum with a nonlinear term */
double shifted(double *m, int n, int k) {
  if (k < 0)
    memmove(m, m - k, (n + k) * sizeof(double));
  else
    memmove(m + k, m, (n - k) * sizeof(double));
  double s = 0;
  for (int i = 0; i < n; i++) s += m[i] * (1 + 0.4 * i) + 0.1 * m[i] * m[i];
  return s;
}

static double shifted_fd(const double *x, int n, int k, int j) {
  double xp[8], xm[8], h = 1e-6;
  for (int i = 0; i < n; i++) xp[i] = xm[i] = x[i];
  xp[j] += h;
  xm[j] -= h;
  return (shifted(xp, n, k) - shifted(xm, n, k)) / (2 * h);
}

/* the brief's case: left by one element, a linear read */
double left1(double *m, int n) {
  memmove(m, m + 1, (n - 1) * sizeof(double));
  double s = 0;
  for (int i = 0; i < n; i++) s += m[i] * (1 + 0.4 * i);
  return s;
}

int main(void) {
  enum { N = 7 };
  const double x0[N] = {1, 2, 3, 4, -1, 0.5, 2.5};
  double x[N], dx[N];
  memcpy(x, x0, sizeof x);
  for (int i = 0; i < N; i++) dx[i] = 0;
  __enzyme_autodiff((void *)left1, enzyme_dup, x, dx, enzyme_const, 4);
  /* m' = {x1, x2, x3, x3}: dx = {0, 1, 1.4, 1.8 + 2.2} */
  const double want1[4] = {0, 1, 1.4, 4.0};
  for (int i = 0; i < 4; i++) checki("left1", i, dx[i], want1[i]);
  const int shifts[] = {-1, -2, -3, 1, 2, 3};
  for (int c = 0; c < 6; c++) {
    int k = shifts[c];
    double g[N], v[N];
    memcpy(x, x0, sizeof x);
    for (int i = 0; i < N; i++) dx[i] = 0;
    __enzyme_autodiff((void *)shifted, enzyme_dup, x, dx, enzyme_const, N, enzyme_const, k);
    for (int j = 0; j < N; j++) g[j] = shifted_fd(x0, N, k, j);
    char name[32];
    snprintf(name, sizeof name, "shift%+d", k);
    for (int j = 0; j < N; j++) checki(name, j, dx[j], g[j]);
    memcpy(x, x0, sizeof x);
    for (int i = 0; i < N; i++) v[i] = rnd(i + 3 * c);
    double want = dotp(v, dx, N);     /* before the call: it shifts v (x's tangent) too */
    snprintf(name, sizeof name, "dot_shift%+d", k);
    check(name, __enzyme_fwddiff((void *)shifted, enzyme_dup, x, v, enzyme_const, N,
                                 enzyme_const, k), want);
  }
  return report();
}
