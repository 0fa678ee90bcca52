/* A global (or an address into one) passed to a function that writes active data through its
   pointer parameter: an accumulator `&g`, a global work array filled by a routine, the same
   routine given an address two elements in, a field of a global record. The global gets a shadow
   as if the caller stored into it itself (before 2026-11-30: "an active value is stored to
   memory that has no shadow" whenever the routine kept the pointer parameter). Each gradient
   against central differences and forward mode against reverse. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, int i, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s[%d] %.12g %.12g%s\n", name, i, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

enum { N = 8 };
static double gacc, garr[N];
static struct { double v; int n; } grec;

__attribute__((noinline)) static void addsq(double *p, double v) { *p += v * v; }
__attribute__((noinline)) static void fill(double *a, const double *x, int n) {
  for (int i = 0; i < n; i++) a[i] = cos(x[i]);
}
__attribute__((noinline)) static void setfield(double *p, double v) { *p = v * 3; }

double accumulate(const double *x, int n) {
  gacc = 0;
  for (int i = 0; i < n; i++) addsq(&gacc, x[i]);
  return gacc * gacc;
}
double work_array(const double *x, int n) {
  fill(garr, x, n);
  double s = 0;
  for (int i = 0; i < n; i++) s += garr[i] * x[i];
  return s;
}
double offset_array(const double *x, int n) {
  fill(garr + 2, x, n - 2);
  double s = 0;
  for (int i = 2; i < n; i++) s += garr[i] * garr[i];
  return s;
}
double record_field(const double *x, int n) {
  setfield(&grec.v, x[1]);
  grec.n = n;
  return grec.v * x[0] + grec.n;
}

#define TEST(f)                                                                           \
  do {                                                                                    \
    double x[N], dx[N] = {0}, xp[N], v[N], jv = 0;                                        \
    for (int i = 0; i < N; i++) { x[i] = 0.3 + 0.5 * sin(1.1 + 2.3 * i); v[i] = cos(i); } \
    __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, N);                     \
    for (int i = 0; i < N; i++) {                                                         \
      double h = 1e-6, fp, fm;                                                            \
      for (int k = 0; k < N; k++) xp[k] = x[k];                                           \
      xp[i] += h; fp = f(xp, N); xp[i] -= 2 * h; fm = f(xp, N);                           \
      check(#f, i, dx[i], (fp - fm) / (2 * h));                                           \
      jv += v[i] * dx[i];                                                                 \
    }                                                                                     \
    check("dot_" #f, 0, __enzyme_fwddiff((void *)f, enzyme_dup, x, v, enzyme_const, N), jv);\
  } while (0)

int main(void) {
  TEST(accumulate);
  TEST(work_array);
  TEST(offset_array);
  TEST(record_field);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
