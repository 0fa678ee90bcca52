/* Loops walking pointers: while (p != end) s += f(*p++), and a strided walk. */
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

double walk(const double *begin, const double *end) {
  double s = 0;
  while (begin != end) {
    double v = *begin++;
    s += v * exp(v);
  }
  return s;
}

double strided(const double *x, int n, int stride) {
  double s = 0;
  for (const double *p = x; p < x + n; p += stride) s += *p * *p * *p;
  return s;
}

int main(void) {
  enum { N = 6 };
  double x[N] = {0.5, -1, 2, 0.25, 1.5, -0.5}, dx[N] = {0};
  /* end pointer: shadow of end is dx + N */
  __enzyme_autodiff((void *)walk, enzyme_dup, x, dx, enzyme_dup, x + N, dx + N);
  for (int i = 0; i < N; i++) checki("walk", i, dx[i], exp(x[i]) * (1 + x[i]));
  double dy[N] = {0};
  __enzyme_autodiff((void *)strided, enzyme_dup, x, dy, enzyme_const, N, enzyme_const, 2);
  for (int i = 0; i < N; i++) checki("strided", i, dy[i], i % 2 ? 0.0 : 3 * x[i] * x[i]);
  double v[N];   /* forward J.v versus v . (reverse gradient) */
  for (int i = 0; i < N; i++) v[i] = rnd(i);
  check("dot_walk", __enzyme_fwddiff((void *)walk, enzyme_dup, x, v, enzyme_dup, x + N, v + N),
        dotp(v, dx, N));
  check("dot_strided",
        __enzyme_fwddiff((void *)strided, enzyme_dup, x, v, enzyme_const, N, enzyme_const, 2),
        dotp(v, dy, N));
  return report();
}
