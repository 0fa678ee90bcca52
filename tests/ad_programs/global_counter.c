/* A mutable global int counter incremented inside the differentiated function (call counting),
   which must not disturb the gradient; the forward pass runs exactly once. */
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
double __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random direction entries */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

int n_evals;
long n_terms;

double counted(const double *x, int n) {
  n_evals++;
  double s = 0;
  for (int i = 0; i < n; i++) {
    s += sin(x[i]) * x[i];
    n_terms++;
  }
  return s;
}

int main(void) {
  enum { N = 4 };
  double x[N] = {0.5, -1, 2, 0.25}, dx[N] = {0};
  __enzyme_autodiff((void *)counted, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("dx", i, dx[i], cos(x[i]) * x[i] + sin(x[i]));
  check("n_evals", n_evals, 1);
  check("n_terms", n_terms, N);
  /* forward/reverse dot test: the tangent along a direction v equals v . gradient; the forward
     derivative also runs the primal (and its counters) exactly once */
  double v[N], vdx = 0;
  for (int i = 0; i < N; i++) { v[i] = rnd(i); vdx += v[i] * dx[i]; }
  check("dot_counted", __enzyme_fwddiff((void *)counted, enzyme_dup, x, v, enzyme_const, N), vdx);
  check("fwd_n_evals", n_evals, 2);
  check("fwd_n_terms", n_terms, 2 * N);
  return report();
}
