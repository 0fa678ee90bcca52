/* Dot product with the int length passed as enzyme_const (and once unmarked, the default). */
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
/* deterministic pseudo-random direction entries */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

double dot(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

int main(void) {
  enum { N = 9 };
  double a[N], b[N], da[N] = {0}, db[N] = {0};
  for (int i = 0; i < N; i++) { a[i] = 0.5 * i - 1; b[i] = cos(i); }
  __enzyme_autodiff((void *)dot, enzyme_dup, a, da, enzyme_dup, b, db, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("da", i, da[i], b[i]);
  for (int i = 0; i < N; i++) checki("db", i, db[i], a[i]);
  /* forward/reverse dot test: the tangent along a direction (va, vb) equals va . da + vb . db */
  double va[N], vb[N], vg = 0, vg5 = 0;
  for (int i = 0; i < N; i++) {
    va[i] = rnd(i);
    vb[i] = rnd(N + i);
    vg += va[i] * da[i] + vb[i] * db[i];
    if (i < 5) vg5 += va[i] * da[i] + vb[i] * db[i];
  }
  check("dot_dot", __enzyme_fwddiff((void *)dot, enzyme_dup, a, va, enzyme_dup, b, vb, enzyme_const, N), vg);
  check("dot_dot5", __enzyme_fwddiff((void *)dot, a, va, b, vb, 5), vg5);
  for (int i = 0; i < N; i++) da[i] = db[i] = 0;
  __enzyme_autodiff((void *)dot, a, da, b, db, 5);   /* unmarked: pointers dup, int const */
  for (int i = 0; i < N; i++) checki("da5", i, da[i], i < 5 ? b[i] : 0.0);
  return report();
}
