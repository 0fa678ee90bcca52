/* A struct of ints passed by value (byval on x86-64) to a function that does not read it,
   copied out of a struct that also holds an active pointer (minisweep's Sweeper_sweep passing
   its block dimensions to the face exchange, which reads them only under MPI). The argument's
   copy (lto/byval_copies.py) is typed by the call's byval type, but a layout of integers alone
   was not taken as evidence: "cannot deduce the type of the memory being copied". Reverse and
   forward mode against the analytic derivative. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-12 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

typedef struct { int nx, ny, nz, ne, nm, na; } Dims;
typedef struct { double *face; int n, exchange; Dims block; } Sweeper;
int exchanges;

__attribute__((noinline)) void faces_end(Sweeper *s, Dims d, int step) {
  (void)d;
  exchanges += s->exchange + step;
}
__attribute__((noinline)) double sweep(Sweeper *s, const double *x) {
  for (int i = 0; i < s->n; i++) s->face[i] = x[i] * x[i] * (i + 1);
  if (s->exchange) faces_end(s, s->block, 1);
  double r = 0;
  for (int i = 0; i < s->n; i++) r += s->face[i];
  return r;
}

int main(void) {
  double x[8], dx[8] = {0}, f[8], df[8] = {0}, v[8], fv[8], dfv[8] = {0};
  for (int i = 0; i < 8; i++) x[i] = 0.5 + i, v[i] = 1.0 / (i + 1);
  Sweeper s = {f, 8, 1, {2, 1, 1, 2, 1, 2}}, ds = s;
  ds.face = df;
  __enzyme_autodiff((void *)sweep, enzyme_dup, &s, &ds, enzyme_dup, x, dx);
  double want_dot = 0;
  char name[32];
  for (int i = 0; i < 8; i++) {
    snprintf(name, sizeof name, "rev[%d]", i);
    check(name, dx[i], 2 * x[i] * (i + 1));
    want_dot += 2 * x[i] * (i + 1) * v[i];
  }
  Sweeper t = {fv, 8, 1, {2, 1, 1, 2, 1, 2}}, dt = t;
  dt.face = dfv;
  check("fwd", __enzyme_fwddiff((void *)sweep, enzyme_dup, &t, &dt, enzyme_dup, x, v), want_dot);
  return failed != 0;
}
