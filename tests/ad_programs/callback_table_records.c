// A local array of records, each a function pointer taken from a constant table beside a
// pointer to the active input (`term.k = &x[j]`), called in a loop through the record. The
// records have a shadow (their `k` fields point to active data); their function pointers have
// none and need none (calls dispatch on the primal pointer). At -O0 the store of the function
// pointer was refused: "a pointer to double data without a shadow (read from global 'table')",
// from the loads of the records' other field. Reverse mode against the analytic gradient,
// forward mode against reverse.
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, int i, double got, double want) {
  int ok = fabs(got - want) <= 1e-10 * (1.0 + fabs(want));
  printf("CHECK %s[%d] %.12g %.12g%s\n", name, i, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

typedef double (*op)(double, double);
static double add(double a, double b) { return a + b; }
static double mul(double a, double b) { return a * b; }
static double hyp(double a, double b) { return sqrt(a * a + b * b); }
static const op table[3] = {add, mul, hyp};
typedef struct { op f; const double *k; } term;

// acc <- f_(i mod 3)(acc, x_(i mod 3) + x_i), acc = 1 first
double fold(const double *x, int n) {
  term ts[3];
  for (int j = 0; j < 3; j++) {
    ts[j].f = table[j];
    ts[j].k = &x[j];
  }
  double acc = 1.0;
  for (int i = 0; i < n; i++) acc = ts[i % 3].f(acc, *ts[i % 3].k + x[i]);
  return acc;
}

enum { N = 6 };

int main(void) {
  double x[N], dx[N] = {0}, dir[N], dot = 0;
  for (int i = 0; i < N; i++) {
    x[i] = 0.3 + 0.21 * i - 0.07 * (i % 3);
    dir[i] = 0.5 - 0.1 * i;
  }
  __enzyme_autodiff((void *)fold, enzyme_dup, x, dx, enzyme_const, (int)N);
  // forward accumulation of the gradient by hand: g = d acc / d x
  double acc = 1.0, g[N] = {0};
  for (int i = 0; i < N; i++) {
    int j = i % 3;
    double b = x[j] + x[i], da, db, next;
    if (j == 0) { next = acc + b; da = 1; db = 1; }
    else if (j == 1) { next = acc * b; da = b; db = acc; }
    else { next = sqrt(acc * acc + b * b); da = acc / next; db = b / next; }
    for (int k = 0; k < N; k++) g[k] *= da;
    g[j] += db;
    g[i] += db;
    acc = next;
  }
  for (int i = 0; i < N; i++) {
    check("dx", i, dx[i], g[i]);
    dot += dx[i] * dir[i];
  }
  check("dot", 0, __enzyme_fwddiff((void *)fold, enzyme_dup, x, dir, enzyme_const, (int)N), dot);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
