/* Loads the reverse sweep may re-execute instead of taping: memory written only before the load
   (a table filled in a prologue) is reloaded; memory written again after the load (later in the
   loop, after the loop, through a pointer select, or a stack buffer whose lifetime ends) must
   come from the tape. */
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
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
static double rnd(int k) { return sin(1.3 + 7.1 * k); }
static double dotp(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

enum { N = 6 };

/* the table is written once before the loops that read it: reloaded in the reverse sweep */
double prologue(const double *x, int n) {
  double *t = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) t[i] = exp(0.3 * x[i]);
  double s = 0;
  for (int r = 0; r < 3; r++)
    for (int i = 0; i < n; i++) s += sin(t[i] * x[(i + r) % n]);
  free(t);
  return s;
}

/* the buffer is overwritten after each read (next row) and after the loop: taped */
double rewritten(const double *x, int n) {
  double *t = malloc(n * sizeof(double));
  double s = 0;
  for (int i = 0; i < n; i++) t[i] = x[i];
  for (int r = 0; r < 3; r++) {
    for (int i = 0; i < n; i++) s += t[i] * t[i] * x[r];
    for (int i = 0; i < n; i++) t[i] = cos(t[i]);
  }
  for (int i = 0; i < n; i++) t[i] = 0;
  s += t[0];
  free(t);
  return s;
}

/* a stack buffer in a block scope: its lifetime ends before the reverse sweep, so its loads
   are taped although nothing writes it after them */
double scoped(const double *x, int n) {
  double s = 0;
  {
    double b[16];
    memcpy(b, x, n * sizeof(double));
    for (int i = 0; i < n; i++) s += b[i] * b[(i + 1) % n];
  }
  return s * s;
}

/* a[0] is written after its read only through q, a select of a and b: the write must count */
double joined(const double *x, int n) {
  double *a = malloc(2 * sizeof(double)), *b = malloc(2 * sizeof(double));
  a[0] = x[0];
  b[0] = x[1];
  double s = 0;
  for (int r = 0; r < 2; r++) {
    double *q = (n + r + 1) % 2 ? a : b;
    s += sin(a[0]) * b[0];
    q[0] = q[0] * 3.0 + x[2];
  }
  free(a);
  free(b);
  return s;
}

static double fd(double (*f)(const double *, int), double *x, int n, int k) {
  double h = 1e-6, x0 = x[k];
  x[k] = x0 + h;
  double fp = f(x, n);
  x[k] = x0 - h;
  double fm = f(x, n);
  x[k] = x0;
  return (fp - fm) / (2 * h);
}

/* a macro: __enzyme_autodiff needs the function itself, not a pointer chosen at run time */
#define TEST(f, x, n)                                                                  \
  do {                                                                                \
    double dx[N] = {0}, v[N];                                                         \
    __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, n);                 \
    for (int k = 0; k < N; k++) checki(#f, k, dx[k], fd(f, x, n, k));                 \
    for (int k = 0; k < N; k++) v[k] = rnd(k);                                        \
    check("dot_" #f, __enzyme_fwddiff((void *)f, enzyme_dup, x, v, enzyme_const, n),  \
          dotp(v, dx, N));                                                            \
  } while (0)

int main(void) {
  double x[N];
  for (int k = 0; k < N; k++) x[k] = 0.4 + 0.6 * sin(0.7 + 1.9 * k);
  TEST(prologue, x, N);
  TEST(rewritten, x, N);
  TEST(scoped, x, N);
  TEST(joined, x, N);
  return report();
}
