/* max and min at a tie (both arguments equal): the derivative is split evenly between the two
   (as JAX and PyTorch do). A max and a min of the same pair then share it, so a smooth function
   computed through them, such as the hypotenuse as max * sqrt(1 + (min / max)^2) (LAPACK's
   dlapy2, reached by its Householder reflections), gets its true derivative at the tie; before,
   both sent it to the same argument (the other one's derivative was 0 instead of 1/sqrt(2)), a
   wrong gradient with no error that dgeev's eigenvalues amplified by 10^4. Written with fmax/fmin
   (llvm.maxnum/minnum) and with ?: (a select on a comparison), at ties and away from them.
   Reverse mode against central finite differences, forward mode against reverse. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
#define N 6

__attribute__((noinline)) static double hyp_lib(double x, double y) {
  double ax = fabs(x), ay = fabs(y), w = fmax(ax, ay), z = fmin(ax, ay);
  return z == 0 ? w : w * sqrt(1 + (z / w) * (z / w));
}

__attribute__((noinline)) static double hyp_sel(double x, double y) {
  double ax = fabs(x), ay = fabs(y), w = ax > ay ? ax : ay, z = ax < ay ? ax : ay;
  return z == 0 ? w : w * sqrt(1 + (z / w) * (z / w));
}

/* pairs of entries, several of them equal in magnitude */
static double f(const double *v) {
  double s = 0;
  for (int i = 0; i + 1 < N; i += 2) s += hyp_lib(v[i], v[i + 1]) + 2 * hyp_sel(v[i + 1], v[i]);
  return s;
}

int main(void) {
  double v[N] = {0.75, 0.75, -1.5, 1.5, 0.3, -0.9}, dv[N] = {0}, t[N], dot = 0, h = 1e-7;
  __enzyme_autodiff((void *)f, enzyme_dup, v, dv);
  for (int i = 0; i < N; i++) {
    double keep = v[i];
    v[i] = keep + h;
    double up = f(v);
    v[i] = keep - h;
    double down = f(v);
    v[i] = keep;
    char name[16];
    snprintf(name, sizeof name, "dv[%d]", i);
    check(name, dv[i], (up - down) / (2 * h));
    t[i] = sin(1.0 + i);
    dot += t[i] * dv[i];
  }
  check("fwd", __enzyme_fwddiff((void *)f, enzyme_dup, v, t), dot);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
