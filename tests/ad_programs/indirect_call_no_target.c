/* An indirect call on a path that never runs, to a type of function of which none has its
   address taken (an optional control object, absent: GSL's gsl_odeiv2_evolve with con = NULL).
   The derivative builds; the call's dispatchers would abort with a message if it ran. Reverse
   mode against central finite differences, forward mode against reverse. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, int i, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1.0 + fabs(want));
  printf("CHECK %s[%d] %.12g %.12g%s\n", name, i, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

typedef int (*adjust_fn)(void *state, double *y, double *h);
typedef struct { adjust_fn adjust; void *state; } Control;

__attribute__((noinline)) double evolve(double *y, Control *con, int n) {
  double h = 0.1;
  for (int i = 0; i < n; i++) {
    y[0] = y[0] + h * sin(y[1]);
    y[1] = y[1] - h * y[0] * y[0];
    if (con) con->adjust(con->state, y, &h);
  }
  return y[0] * y[1];
}
double loss(double *y, int n) { return evolve(y, (Control *)0, n); }

int main(void) {
  double y[2] = {0.3, 0.7}, dy[2] = {0, 0}, h = 1e-6;
  __enzyme_autodiff((void *)loss, enzyme_dup, y, dy, enzyme_const, 5);
  for (int k = 0; k < 2; k++) {
    double a[2] = {0.3, 0.7}, b[2] = {0.3, 0.7};
    a[k] += h;
    b[k] -= h;
    check("loss.y", k, dy[k], (loss(a, 5) - loss(b, 5)) / (2 * h), 1e-6);
  }
  double y0[2] = {0.3, 0.7}, t[2] = {0.25, -1.0};
  double jt = __enzyme_fwddiff((void *)loss, enzyme_dup, y0, t, enzyme_const, 5);
  check("forward.dot", 0, jt, 0.25 * dy[0] - 1.0 * dy[1], 1e-9);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
