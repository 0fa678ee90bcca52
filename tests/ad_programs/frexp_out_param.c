/* frexp writes its exponent through a pointer to a local that lives across the loop: at -O2 the
   local stays an alloca with lifetime markers, and the derivative must keep it a fixed-size
   alloca of the entry block (a later block made LLVM's jump threading break the IR). The
   exponent, different in each iteration, is used by the derivative. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

enum { N = 5 };

double mant(const double *x, int n) {
  double acc = 0;
  int e;
  for (int i = 0; i < n; i++) {
    double m = frexp(x[i] * 5.0, &e);
    acc += m * m * e + sin(x[i]) * e;
  }
  return acc;
}

int main(void) {
  double x[N] = {0.3, 1.7, 2.9, 0.77, 11.3}, dx[N] = {0}, v[N], h = 1e-7;
  __enzyme_autodiff((void *)mant, enzyme_dup, x, dx, enzyme_const, N);
  double dot = 0;
  for (int k = 0; k < N; k++) {
    double x0 = x[k];
    x[k] = x0 + h;
    double fp = mant(x, N);
    x[k] = x0 - h;
    double fm = mant(x, N);
    x[k] = x0;
    char nm[32];
    snprintf(nm, sizeof nm, "mant[%d]", k);
    check(nm, dx[k], (fp - fm) / (2 * h));
    v[k] = cos(1.0 + k);
    dot += v[k] * dx[k];
  }
  check("dot_mant", __enzyme_fwddiff((void *)mant, enzyme_dup, x, v, enzyme_const, N), dot);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
