/* A helper reads a vector through a temporary that is the operand's own data when it has some,
   else a zeroed stack block when small and a heap block when large (Eigen's aligned stack
   memory, met in SelfAdjointEigenSolver's tridiagonalization). The pointer joins the shadowed
   operand with fresh blocks that nothing active is stored into; those blocks now get shadows
   too (refused before: "pointer '%14' joins shadowed and unshadowed memory"). Both paths run:
   the view with data and the one without (small and large). Reverse mode against the analytic
   derivative, forward mode against reverse. */
#include <alloca.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-9 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
#define N 5

struct view { const double *data; long n; };

__attribute__((noinline)) static double wdot(const double *x, const struct view *v) {
  const double *t = v->data;
  double *heap = 0;
  if (!t) {
    double *b = v->n < 64 ? alloca(v->n * sizeof *b) : (heap = malloc(v->n * sizeof *b));
    memset(b, 0, v->n * sizeof *b);
    t = b;
  }
  double s = 0;
  for (long i = 0; i < N; i++) s += sin(x[i]) * t[i];
  free(heap);
  return s;
}

/* x . sin(x) through the view of x, plus the views without data (they add 0) */
static double f(const double *x, long small, long large) {
  struct view v = {x, N}, e1 = {0, small}, e2 = {0, large};
  return wdot(x, &v) + wdot(x, &e1) + wdot(x, &e2);
}

int main(void) {
  double x[N] = {0.3, -1.2, 0.7, 2.0, 0.1}, dx[N] = {0}, t[N], dot = 0;
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, 8L, enzyme_const, 100L);
  for (int i = 0; i < N; i++) {
    char name[16];
    snprintf(name, sizeof name, "dx[%d]", i);
    check(name, dx[i], cos(x[i]) * x[i] + sin(x[i]));
    t[i] = cos(1.0 + i);
    dot += t[i] * dx[i];
  }
  check("fwd", __enzyme_fwddiff((void *)f, enzyme_dup, x, t, enzyme_const, 8L,
                                enzyme_const, 100L), dot);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
