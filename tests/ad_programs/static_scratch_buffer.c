/* A file-scope scratch buffer grown on demand (the legacy `static double *work` idiom):
   u_0 = y_0, u_i = u_{i-1} y_i + 1, result u_{n-1}. The buffer is allocated by the primal
   before the first derivative, grown inside a derivative, and reused by later derivatives:
   its shadow was null then (a segfault). Central differences; forward against reverse. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

static double *work;
static int work_n;
static double *get_work(int n) {
  if (n > work_n) {
    work = realloc(work, n * sizeof(double));
    work_n = n;
  }
  return work;
}

__attribute__((noinline)) double chain(const double *y, int n) {
  double *u = get_work(n);
  u[0] = y[0];
  for (int i = 1; i < n; i++) u[i] = u[i - 1] * y[i] + 1.0;
  return u[n - 1];
}

int main(void) {
  double y[7] = {1.5, 2, 0.5, 3, -0.4, 1.1, 0.9};
  get_work(3);                             /* the primal allocates it first */
  for (int n = 4; n <= 7; n += 3) {        /* the first derivative grows it, the next reuse it */
    for (int rep = 0; rep < 2; rep++) {
      double dy[7] = {0}, v[7], vdy = 0;
      __enzyme_autodiff((void *)chain, enzyme_dup, y, dy, enzyme_const, n);
      for (int k = 0; k < n; k++) {
        double yp[7], ym[7], h = 1e-6;
        for (int j = 0; j < 7; j++) yp[j] = ym[j] = y[j];
        yp[k] += h;
        ym[k] -= h;
        char name[32];
        snprintf(name, sizeof name, "n%d.rep%d.dy[%d]", n, rep, k);
        check(name, dy[k], (chain(yp, n) - chain(ym, n)) / (2 * h));
        v[k] = sin(1.3 + 7.1 * k);
        vdy += v[k] * dy[k];
      }
      check("dot", __enzyme_fwddiff((void *)chain, enzyme_dup, y, v, enzyme_const, n), vdy);
    }
  }
  free(work);
  work = NULL;
  work_n = 0;
  double dy[7] = {0};                      /* freed by the primal: grown again from NULL */
  __enzyme_autodiff((void *)chain, enzyme_dup, y, dy, enzyme_const, 4);
  check("after_free.dy[1]", dy[1], 2.25);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
