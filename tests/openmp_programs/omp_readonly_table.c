/* Loads in a parallel region (a split pair: the reverse region runs in a later fork) of memory
   that nothing in the gradient writes are re-read by the reverse region instead of taped
   (ad/plan/read_only.py). Each energy returns a scalar, as a docking score does. Where the same
   gradient writes that memory after the region (an argument's table, a global), the loads must
   stay taped: a reload would read the new values and give a wrong gradient. Writes through a
   `restrict` argument leave the other arguments read-only. */
#include <math.h>
#include <stdio.h>
#include <string.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
#define N 24
#define T 37
static int failed;
static void check(const char *name, int i, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1.0 + fabs(want));
  printf("CHECK %s[%d] %.15g %.15g%s\n", name, i, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}

static double pair(double xi, double t) {
  double d = xi - t;
  double e = d * d + 0.3;
  if (e < 0.5) return 0.5 * sin(e) * t;
  return exp(-0.2 * e) * (t + xi);
}

/* only read: x and the table */
double energy_ro(const double *x, const double *tab, int n) {
  double s = 0;
#pragma omp parallel for reduction(+ : s) schedule(static)
  for (int i = 0; i < n; i++)
    for (int j = 0; j < T; j++) s += pair(x[i], tab[j]) + x[i] * x[i] * tab[j];
  return s;
}

/* the table is rewritten after the region, and read again by a second region */
double energy_rewritten(const double *x, double *tab, int n) {
  double s = 0;
#pragma omp parallel for reduction(+ : s) schedule(static)
  for (int i = 0; i < n; i++)
    for (int j = 0; j < T; j++) s += pair(x[i], tab[j]) + x[i] * x[i] * tab[j];
  for (int j = 0; j < T; j++) tab[j] = 0.7 * tab[j] + 0.1 * x[j % n];
#pragma omp parallel for reduction(+ : s) schedule(dynamic, 3)
  for (int i = 0; i < n; i++)
    for (int j = 0; j < T; j++) s += pair(x[i], tab[j]) + x[i] * x[i] * tab[j];
  return s;
}

/* a global table read by the region, and a second global rewritten after it */
static double gtab[T], gscale[T];
double energy_global(const double *x, int n) {
  double s = 0;
#pragma omp parallel for reduction(+ : s) schedule(static)
  for (int i = 0; i < n; i++)
    for (int j = 0; j < T; j++) s += pair(x[i], gtab[j]) * gscale[j] + x[i] * x[i] * gscale[j];
  for (int j = 0; j < T; j++) gscale[j] = gscale[j] * 0.5 + x[j % n] * x[j % n];
#pragma omp parallel for reduction(+ : s) schedule(static)
  for (int i = 0; i < n; i++)
    for (int j = 0; j < T; j++) s += pair(x[i], gtab[j]) * gscale[j] + x[i] * x[i] * gscale[j];
  return s;
}

/* per-element results written through a restrict argument: x and the table stay read-only */
static double outbuf[N];
double energy_restrict(const double *restrict x, const double *restrict tab,
                       double *restrict out, int n) {
  double s = 0;
#pragma omp parallel for reduction(+ : s) schedule(static)
  for (int i = 0; i < n; i++) {
    double e = 0;
    for (int j = 0; j < T; j++) e += pair(x[i], tab[j]) + x[i] * x[i] * tab[j];
    out[i] = e;
    s += e * e;
  }
  return s;
}

static double call(int which, const double *x, double *tab) {
  if (which == 0) return energy_ro(x, tab, N);
  if (which == 1) return energy_rewritten(x, tab, N);
  if (which == 3) return energy_restrict(x, tab, outbuf, N);
  return energy_global(x, N);
}

int main(void) {
  static const char *names[] = {"ro", "rewritten", "global", "restrict"};
  double x[N], tab[T], tab0[T], dx[N], xp[N], sum = 0;
  for (int i = 0; i < N; i++) x[i] = 0.3 + 0.5 * sin(1.3 + 7.1 * i);
  for (int j = 0; j < T; j++) tab0[j] = 0.8 * cos(0.4 + 2.3 * j);
  for (int w = 0; w < 4; w++) {
    memcpy(tab, tab0, sizeof tab);
    for (int j = 0; j < T; j++) { gtab[j] = tab0[j]; gscale[j] = 1.0 + 0.1 * j; }
    memset(dx, 0, sizeof dx);
    if (w == 0) __enzyme_autodiff((void *)energy_ro, enzyme_dup, x, dx, enzyme_const, tab,
                                  enzyme_const, N);
    if (w == 1) {            /* the rewritten table depends on x: it has a (zero) shadow */
      double dtab[T] = {0};
      __enzyme_autodiff((void *)energy_rewritten, enzyme_dup, x, dx, enzyme_dup, tab, dtab,
                        enzyme_const, N);
    }
    if (w == 2) __enzyme_autodiff((void *)energy_global, enzyme_dup, x, dx, enzyme_const, N);
    if (w == 3) {            /* out: an output nobody reads afterwards, its shadow zero */
      double dout[N] = {0};
      __enzyme_autodiff((void *)energy_restrict, enzyme_dup, x, dx, enzyme_const, tab,
                        enzyme_dup, outbuf, dout, enzyme_const, N);
    }
    for (int i = 0; i < N; i++) {
      double h = 1e-6, fp, fm;
      memcpy(xp, x, sizeof xp); xp[i] += h;
      memcpy(tab, tab0, sizeof tab);
      for (int j = 0; j < T; j++) gscale[j] = 1.0 + 0.1 * j;
      fp = call(w, xp, tab);
      memcpy(xp, x, sizeof xp); xp[i] -= h;
      memcpy(tab, tab0, sizeof tab);
      for (int j = 0; j < T; j++) gscale[j] = 1.0 + 0.1 * j;
      fm = call(w, xp, tab);
      check(names[w], i, dx[i], (fp - fm) / (2 * h), 1e-6);
      sum += dx[i];
    }
  }
  printf("SUM %.17g\n", sum);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
