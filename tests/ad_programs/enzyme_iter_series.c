/* __enzyme_iter(a, b): a in the program, a + k*b in its k-th derivative. A Taylor series of sin
   truncated after __enzyme_iter(12, 1) terms keeps enough terms when it is differentiated twice
   and four times (reverse over reverse), and once in forward mode: the k-th derivative of the
   series with 12 + k terms is the series with 12 terms again (to rounding), within 5e-9 of the
   exact derivative of sin (a fixed N = 12 would be off by 2e-7 after two derivatives). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol;
  printf("CHECK %s %.15g %.15g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
uint64_t __enzyme_iter(uint64_t, uint64_t);
double __enzyme_autodiff(void *, double);
double __enzyme_fwddiff(void *, double, double);

__attribute__((noinline)) static double factorial(uint64_t n) {
  double f = 1;
  for (uint64_t k = 2; k <= n; k++)
    f *= k;
  return f;
}
static double series_sin(double x) {
  double s = 0;
  uint64_t n = __enzyme_iter(12, 1);
  for (uint64_t i = 1; i <= n; i += 2)
    s += ((i / 2) % 2 ? -1.0 : 1.0) * pow(x, (double)i) / factorial(i);
  return s;
}
static double d1(double x) { return __enzyme_autodiff((void *)series_sin, x); }
static double d2(double x) { return __enzyme_autodiff((void *)d1, x); }
static double d3(double x) { return __enzyme_autodiff((void *)d2, x); }
static double d4(double x) { return __enzyme_autodiff((void *)d3, x); }

int main(void) {
  double x = 1.23;
  double p = series_sin(x);
  check("primal", p, sin(x), 5e-9);      /* N = 12: error x^13/13! ~ 2.4e-9 */
  check("d1", d1(x), cos(x), 5e-10);
  check("d2", d2(x), -sin(x), 5e-9);
  check("d2_same_terms", d2(x), -p, 1e-14);
  check("d4", d4(x), sin(x), 5e-9);
  check("d4_same_terms", d4(x), p, 1e-14);
  /* forward mode differentiates once too: the tangent matches the gradient */
  check("fwd_d1", __enzyme_fwddiff((void *)series_sin, x, 1.0), d1(x), 1e-14);
  return failed != 0;
}
