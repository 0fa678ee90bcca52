/* A variable-length array temporary on the stack (dynamic alloca). */
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
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }
static double dotp(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

double vla(const double *x, int n) {
  double t[n];
  for (int i = 0; i < n; i++) t[i] = cos(x[i]);
  double s = 0;
  for (int i = 0; i < n; i++) s += t[i] * t[(i + 1) % n];
  return s;
}

/* a VLA per iteration: the stack is saved and restored around each one */
double vla_loop(const double *x, int n) {
  double s = 0;
  for (int it = 1; it <= 3; it++) {
    double t[n];
    for (int i = 0; i < n; i++) t[i] = sin(x[i] * it);
    for (int i = 0; i < n; i++) s += t[i] * t[(i + it) % n];
  }
  return s;
}

int main(void) {
  enum { N = 5 };
  double x[N] = {0.5, -1, 2, 0.25, 1.5}, dx[N] = {0};
  __enzyme_autodiff((void *)vla, enzyme_dup, x, dx, enzyme_const, N);
  for (int k = 0; k < N; k++)
    checki("dx", k, dx[k], -sin(x[k]) * (cos(x[(k + 1) % N]) + cos(x[(k + N - 1) % N])));
  double v[N];   /* forward J.v versus v . (reverse gradient) */
  for (int i = 0; i < N; i++) v[i] = rnd(i);
  check("dot_vla", __enzyme_fwddiff((void *)vla, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dx, N));
  double dl[N] = {0}, h = 1e-6;
  __enzyme_autodiff((void *)vla_loop, enzyme_dup, x, dl, enzyme_const, N);
  for (int k = 0; k < N; k++) {
    double xp[N], xm[N];
    for (int i = 0; i < N; i++) xp[i] = xm[i] = x[i];
    xp[k] += h, xm[k] -= h;
    checki("dloop", k, dl[k], (vla_loop(xp, N) - vla_loop(xm, N)) / (2 * h));
  }
  /* vector forward mode: 4 directions (dup for vla, dupv for vla_loop) versus width 1 */
  double v4[4][N];
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < N; i++) v4[k][i] = rnd(N + k * N + i);
  V4 t4 = __enzyme_fwddiff4((void *)vla, enzyme_width, 4, enzyme_dup, x, v4[0], v4[1], v4[2], v4[3],
                            enzyme_const, N);
  for (int k = 0; k < 4; k++)
    checkv("vla", k, -1, t4.d[k], __enzyme_fwddiff((void *)vla, enzyme_dup, x, v4[k], enzyme_const, N));
  t4 = __enzyme_fwddiff4((void *)vla_loop, enzyme_width, 4, enzyme_dupv, sizeof v4[0], x, v4,
                         enzyme_const, N);
  for (int k = 0; k < 4; k++)
    checkv("vla_loop", k, -1, t4.d[k],
           __enzyme_fwddiff((void *)vla_loop, enzyme_dup, x, v4[k], enzyme_const, N));
  return report();
}
