/* File-scope tables of pointers to the program's global arrays, set in their declaration and
   never written: a `static double *fields[]` filled by memcpy through it and read by a
   stencil, and a registry of {array, weight} records updated in place through it. LLVM marks
   such a table `constant`; the arrays are reached only through it, so their shadows must be
   too. Before, the table's shadow was a zeroed scratch: the arrays' adjoints were lost (a
   gradient of 0, or a partial one with no error, depending on the level) or the store was
   refused. The tables' lengths are run-time values, so the optimizer cannot fold the loads. Reverse mode against central differences, forward mode against reverse. */
#include <math.h>
#include <stdio.h>
#include <string.h>

extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

#define N 8
static double rho[N], mom[N], ene[N];
static double *fields[3] = {rho, mom, ene};

typedef struct {
  double *data;
  double weight;
} Field;
static Field registry[2] = {{mom, 1.0}, {ene, 0.5}};

static int failed;
static void check(const char *name, int i, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1.0 + fabs(want));
  printf("CHECK %s[%d] %.12g %.12g%s\n", name, i, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}

double energy(const double *x, int n, int nf, int nrec) {
  for (int k = 0; k < nf; k++) memcpy(fields[k], x + k * n, n * sizeof(double));
  for (int k = 0; k < nrec; k++) {         /* one smoothing sweep in place, per record */
    double *a = registry[k].data, prev = a[n - 1];
    for (int i = 0; i < n; i++) {
      double cur = a[i];
      a[i] = cur + 0.1 * (prev - cur) + 0.02 * cur * cur;
      prev = cur;
    }
  }
  double s = 0;
  for (int k = 0; k < nf; k++)             /* a periodic stencil over every field */
    for (int i = 0; i < n; i++)
      s += fields[k][i] * fields[k][(i + 1) % n] * (1.0 + 0.1 * k);
  for (int k = 0; k < nrec; k++)
    for (int i = 0; i < n; i++) s += registry[k].weight * sin(registry[k].data[i]);
  return s;
}

/* the same shapes with the tables' lengths known: at -O2 this one's gradient was partly wrong
   with no error (the in-place sweep's adjoints lost), at -O0 it was refused */
static double u[N], w[N];
static Field fixed[2] = {{u, 1.0}, {w, 0.5}};
static double *pair[2] = {u, w};

double smoothed(const double *x) {
  for (int k = 0; k < 2; k++) memcpy(pair[k], x + k * N, N * sizeof(double));
  for (int k = 0; k < 2; k++) {
    double *a = fixed[k].data, prev = a[N - 1];
    for (int i = 0; i < N; i++) {
      double cur = a[i];
      a[i] = cur + 0.1 * (prev - cur) + 0.02 * cur * cur;
      prev = cur;
    }
  }
  double s = 0;
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < N; i++) s += fixed[k].weight * fixed[k].data[i] * fixed[k].data[i];
  return s;
}

int main(int argc, char **argv) {
  (void)argv;
  int nf = 2 + argc, nrec = 1 + argc;    /* 3 and 2, unknown to the optimizer */
  double x[3 * N], dx[3 * N] = {0}, dir[3 * N];
  for (int i = 0; i < 3 * N; i++) {
    x[i] = 0.3 + 0.07 * i - 0.2 * (i % 3);
    dir[i] = 0.5 - 0.03 * i;
  }
  __enzyme_autodiff((void *)energy, enzyme_dup, x, dx, enzyme_const, N, enzyme_const, nf,
                    enzyme_const, nrec);
  double dot = 0, h = 1e-6;
  for (int i = 0; i < 3 * N; i++) {
    double xp[3 * N], xm[3 * N];
    memcpy(xp, x, sizeof x);
    memcpy(xm, x, sizeof x);
    xp[i] += h;
    xm[i] -= h;
    check("dx", i, dx[i], (energy(xp, N, nf, nrec) - energy(xm, N, nf, nrec)) / (2 * h), 1e-6);
    dot += dx[i] * dir[i];
  }
  double t = __enzyme_fwddiff((void *)energy, enzyme_dup, x, dir, enzyme_const, N,
                             enzyme_const, nf, enzyme_const, nrec);
  check("dot", 0, t, dot, 1e-9);
  double y[2 * N], dy[2 * N] = {0};
  for (int i = 0; i < 2 * N; i++) y[i] = 1.0 + 0.1 * i;
  __enzyme_autodiff((void *)smoothed, enzyme_dup, y, dy);
  for (int i = 0; i < 2 * N; i++) {
    double yp[2 * N], ym[2 * N];
    memcpy(yp, y, sizeof y);
    memcpy(ym, y, sizeof y);
    yp[i] += h;
    ym[i] -= h;
    check("dy", i, dy[i], (smoothed(yp) - smoothed(ym)) / (2 * h), 1e-6);
  }
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
