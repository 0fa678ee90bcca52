/* A value the reverse sweep needs both inside a loop (pushed once per loop, kept in a slot while
   the loop runs backwards) and in a block before the loop reads that slot instead of a tape
   entry of its own, when every path from the block reaches the loop's exit (plan.py). Here the
   block before the loop sometimes leaves the row without running the loop (r % 3 == 0 with
   skip): then it must keep its own tape entry. Checked against central differences and forward
   mode for n = 0 .. 9. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

enum { M = 10 };

/* a = sin(x[r]) is taped (a call); the first use always reaches the inner loop */
double always(const double *x, int n) {
  double s = 0;
  for (int r = 0; r < n; r++) {
    double a = sin(x[r]);
    if (x[r] > 0.2) s += a * a * x[r];
    for (int j = r; j < n; j++) s += a * x[j] * x[j];
  }
  return s;
}

/* the same, but some rows leave before the inner loop */
double sometimes(const double *x, int n, int skip) {
  double s = 0;
  for (int r = 0; r < n; r++) {
    double a = sin(x[r]);
    if (r % 3 == 0) {
      s += a * a * x[r];
      if (skip) continue;
    }
    for (int j = r; j < n; j++) s += a * x[j] * x[j];
  }
  return s;
}

static double f0(const double *x, int n) { return always(x, n); }
static double f1(const double *x, int n) { return sometimes(x, n, 1); }
static double f2(const double *x, int n) { return sometimes(x, n, 0); }

static void g0(double *x, double *dx, int n) {
  __enzyme_autodiff((void *)always, enzyme_dup, x, dx, enzyme_const, n);
}
static void g1(double *x, double *dx, int n) {
  __enzyme_autodiff((void *)sometimes, enzyme_dup, x, dx, enzyme_const, n, enzyme_const, 1);
}
static void g2(double *x, double *dx, int n) {
  __enzyme_autodiff((void *)sometimes, enzyme_dup, x, dx, enzyme_const, n, enzyme_const, 0);
}
static double t0(double *x, double *tx, int n) {
  return __enzyme_fwddiff((void *)always, enzyme_dup, x, tx, enzyme_const, n);
}
static double t1(double *x, double *tx, int n) {
  return __enzyme_fwddiff((void *)sometimes, enzyme_dup, x, tx, enzyme_const, n, enzyme_const, 1);
}
static double t2(double *x, double *tx, int n) {
  return __enzyme_fwddiff((void *)sometimes, enzyme_dup, x, tx, enzyme_const, n, enzyme_const, 0);
}

static void test(const char *name, double (*f)(const double *, int), int n,
                 void (*grad)(double *, double *, int), double (*tan)(double *, double *, int)) {
  double x[M], dx[M] = {0}, tx[M] = {0}, h = 1e-6, dot = 0;
  for (int k = 0; k < M; k++) x[k] = 0.3 + 0.5 * sin(1.0 + 2.3 * k);
  grad(x, dx, n);
  for (int k = 0; k < M; k++) {
    double x0 = x[k];
    x[k] = x0 + h;
    double fp_ = f(x, n);
    x[k] = x0 - h;
    double fm = f(x, n);
    x[k] = x0;
    char nm[64];
    snprintf(nm, sizeof nm, "%s_n%d_dx[%d]", name, n, k);
    check(nm, dx[k], (fp_ - fm) / (2 * h));
    tx[k] = sin(0.4 * k + 1);
    dot += tx[k] * dx[k];
  }
  char nm[64];
  snprintf(nm, sizeof nm, "dot_%s_n%d", name, n);
  check(nm, tan(x, tx, n), dot);
}

int main(void) {
  for (int n = 0; n < M; n++) {
    test("always", f0, n, g0, t0);
    test("sometimes_skip", f1, n, g1, t1);
    test("sometimes", f2, n, g2, t2);
  }
  return report();
}
