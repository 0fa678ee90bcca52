/* Loads in the augmented forward of a callee kept as a call (a split pair: its reverse runs after
   the rest of the caller's forward sweep) are re-read by the reverse instead of taped when no
   write of the whole gradient reaches their memory (ad/plan/read_only.py). Memory the gradient writes
   later (in the caller after the call, in another callee, in a global) must stay taped: a reload
   would read the new values. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

enum { N = 6 };
static double table[N];        /* filled by main before any gradient: read-only inside them */
static double scratch[N];      /* rewritten inside the gradients that read it */

/* two copies: a derivative shared by several gradients reloads only what all of them leave
   alone, so the read-only gradients get their own */
#define TERM(name)                                                                          \
  __attribute__((noinline)) static double name(const double *x, const double *tab, int n,   \
                                               int i) {                                     \
    double s = 0;                                                                           \
    for (int j = 0; j < n; j++) s += sin(x[i] * tab[j]) * tab[(j + i) % n] + x[j] * x[i];  \
    return s;                                                                               \
  }
TERM(term)
TERM(term_w)

__attribute__((noinline)) static void bump(double *t, const double *x, int n) {
  for (int j = 0; j < n; j++) t[j] = 0.5 * t[j] + x[(j + 1) % n] * x[j];
}

/* x and the global table are only read: both reloaded */
double ro_global(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += term(x, table, n, i);
  return s * s;
}

/* the argument itself as the table */
double ro_arg(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += term(x, x, n, i) * cos(x[i]);
  return s;
}

/* the global scratch is set, read by term, rewritten by the caller, read again */
double global_rewritten(const double *x, int n) {
  for (int j = 0; j < n; j++) scratch[j] = 0.2 + 0.1 * j;
  double s = 0;
  for (int i = 0; i < n; i++) s += term_w(x, scratch, n, i);
  for (int j = 0; j < n; j++) scratch[j] = scratch[j] * x[j] + 0.3;
  for (int i = 0; i < n; i++) s += term_w(x, scratch, n, i);
  return s;
}

/* another callee rewrites the table between two reads of it */
double callee_rewrites(const double *x, int n) {
  for (int j = 0; j < n; j++) scratch[j] = table[j];
  double s = 0;
  for (int r = 0; r < 3; r++) {
    for (int i = 0; i < n; i++) s += term_w(x, scratch, n, i);
    bump(scratch, x, n);
  }
  return s;
}

/* a heap table the gradient fills and overwrites: taped */
double heap_table(const double *x, int n) {
  double *t = malloc(n * sizeof(double)), s = 0;
  for (int j = 0; j < n; j++) t[j] = exp(0.2 * x[j]);
  for (int i = 0; i < n; i++) s += term_w(x, t, n, i);
  for (int j = 0; j < n; j++) t[j] = t[j] * t[j];
  for (int i = 0; i < n; i++) s += term_w(x, t, n, i);
  free(t);
  return s;
}

static double dotp(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
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
  for (int k = 0; k < N; k++) {
    x[k] = 0.4 + 0.6 * sin(0.7 + 1.9 * k);
    table[k] = 0.8 * cos(0.3 + 2.1 * k);
  }
  TEST(ro_global, x, N);
  TEST(ro_arg, x, N);
  TEST(global_rewritten, x, N);
  TEST(callee_rewrites, x, N);
  TEST(heap_table, x, N);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
