/* Aligned allocations holding active data: aligned_alloc and posix_memalign get shadows like
   malloc (zeroed, freed with the primal block), in reverse and forward mode. */
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

double aligned(const double *x, int n) {
  double *a = aligned_alloc(64, 64 * ((n * sizeof(double) + 63) / 64));
  double *b;
  if (posix_memalign((void **)&b, 32, n * sizeof(double)))
    return 0;
  for (int i = 0; i < n; i++) {
    a[i] = x[i] * x[i];
    b[i] = a[i] * x[i];
  }
  double s = 0;
  for (int i = 0; i < n; i++) s += b[i] + a[i] * x[0];
  free(a);
  free(b);
  return s;      /* sum x^3 + x0 sum x^2 */
}

int main(void) {
  enum { N = 5 };
  double x[N] = {1, 2, -3, 0.5, 1.5};
  double sq = 0;
  for (int i = 0; i < N; i++) sq += x[i] * x[i];
  for (int call = 0; call < 3; call++) {
    double dx[N] = {0}, v[N];
    __enzyme_autodiff((void *)aligned, enzyme_dup, x, dx, enzyme_const, N);
    for (int i = 0; i < N; i++)
      checki("aligned", i, dx[i], 3 * x[i] * x[i] + 2 * x[0] * x[i] + (i == 0 ? sq : 0));
    for (int i = 0; i < N; i++) v[i] = rnd(i + call);
    check("dot_aligned", __enzyme_fwddiff((void *)aligned, enzyme_dup, x, v, enzyme_const, N),
          dotp(v, dx, N));
  }
  return report();
}
