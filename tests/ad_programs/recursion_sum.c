/* Recursive functions over an array: linear recursion (may become a loop) and divide-and-conquer
   tree recursion that stays recursive. */
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

double rsum(const double *x, int n) {
  if (n == 0) return 0;
  return x[0] * x[0] + rsum(x + 1, n - 1);
}

double tree_sum(const double *x, int n) {
  if (n == 1) return sin(x[0]);
  int h = n / 2;
  return tree_sum(x, h) * 1.5 + tree_sum(x + h, n - h);
}

/* reference for tree_sum: the weight of leaf i is 1.5^(number of left turns on its path) */
static double weight(int i, int n) {
  if (n == 1) return 1;
  int h = n / 2;
  return i < h ? 1.5 * weight(i, h) : weight(i - h, n - h);
}

int main(void) {
  enum { N = 7 };
  double x[N] = {0.5, -1, 2, 0.3, 1.2, -0.7, 0.9}, dx[N] = {0};
  double v[N];   /* forward J.v versus v . (reverse gradient) */
  for (int i = 0; i < N; i++) v[i] = rnd(i);
  __enzyme_autodiff((void *)rsum, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("rsum", i, dx[i], 2 * x[i]);
  check("dot_rsum", __enzyme_fwddiff((void *)rsum, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dx, N));
  for (int i = 0; i < N; i++) dx[i] = 0;
  __enzyme_autodiff((void *)tree_sum, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("tree_sum", i, dx[i], weight(i, N) * cos(x[i]));
  check("dot_tree_sum", __enzyme_fwddiff((void *)tree_sum, enzyme_dup, x, v, enzyme_const, N),
        dotp(v, dx, N));
  return report();
}
