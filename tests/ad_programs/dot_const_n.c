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
  for (int i = 0; i < N; i++) da[i] = db[i] = 0;
  __enzyme_autodiff((void *)dot, a, da, b, db, 5);   /* unmarked: pointers dup, int const */
  for (int i = 0; i < N; i++) checki("da5", i, da[i], i < 5 ? b[i] : 0.0);
  return report();
}
