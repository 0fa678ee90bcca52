// A function returning an active long double (x86_fp80) or __float128 (fp128), differentiated in
// reverse mode: the result's seed was written as the literal 1.0, which LLVM accepts for float
// and double only ("floating point constant does not have type 'x86_fp80'": an internal error).
// f(x) = x^2 sin(x): f' = 2 x sin(x) + x^2 cos(x);  q(x) = 3 x^3 + x: q' = 9 x^2 + 1.
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-12 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
long double __enzyme_autodiff(void *, ...);
__float128 __enzyme_autodiff_q(void *, ...) __asm__("__enzyme_autodiff");
long double __enzyme_fwddiff(void *, ...);

long double f(long double x) { return x * x * sinl(x); }
__float128 q(__float128 x) { return 3 * x * x * x + x; }

int main(void) {
  double x = 0.7;
  check("long_double", (double)__enzyme_autodiff((void *)f, (long double)x),
        2 * x * sin(x) + x * x * cos(x));
  check("float128", (double)__enzyme_autodiff_q((void *)q, (__float128)x), 9 * x * x + 1);
  check("long_double_forward", (double)__enzyme_fwddiff((void *)f, (long double)x, 1.0L),
        2 * x * sin(x) + x * x * cos(x));
  return failed;
}
