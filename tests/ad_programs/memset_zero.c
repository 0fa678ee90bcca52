/* memset of a temporary and of a local array before accumulating into it (histogram-like
   scatter with a constant index table). */
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
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }
static double dotp(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

static const int bin_of[6] = {0, 2, 1, 2, 0, 3};

double binned(const double *x, int n) {
  double bins[4];
  memset(bins, 0, sizeof bins);
  for (int i = 0; i < n; i++) bins[bin_of[i]] += x[i];
  double s = 0;
  for (int b = 0; b < 4; b++) s += (b + 1) * bins[b] * bins[b];
  return s;
}

double heap_binned(const double *x, int n) {
  double *bins = malloc(4 * sizeof(double));
  memset(bins, 0, 4 * sizeof(double));
  for (int i = 0; i < n; i++) bins[bin_of[i]] += sin(x[i]);
  double s = bins[0] * bins[1] + bins[2] * bins[3];
  free(bins);
  return s;
}

int main(void) {
  enum { N = 6 };
  double x[N] = {0.5, -1, 2, 0.25, 1.5, -0.5}, dx[N] = {0}, bins[4] = {0};
  for (int i = 0; i < N; i++) bins[bin_of[i]] += x[i];
  __enzyme_autodiff((void *)binned, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("binned", i, dx[i], 2 * (bin_of[i] + 1) * bins[bin_of[i]]);
  double sb[4] = {0}, dy[N] = {0};
  for (int i = 0; i < N; i++) sb[bin_of[i]] += sin(x[i]);
  const int partner[4] = {1, 0, 3, 2};
  __enzyme_autodiff((void *)heap_binned, enzyme_dup, x, dy, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("heap_binned", i, dy[i], cos(x[i]) * sb[partner[bin_of[i]]]);
  double v[N];   /* forward J.v versus v . (reverse gradient) */
  for (int i = 0; i < N; i++) v[i] = rnd(i);
  check("dot_binned", __enzyme_fwddiff((void *)binned, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dx, N));
  check("dot_heap_binned", __enzyme_fwddiff((void *)heap_binned, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dy, N));
  return report();
}
