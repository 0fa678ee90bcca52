/* A struct holding a union whose first member is an integer, copied whole (a memcpy) while the
   union holds a double: the IR type of the union says i64, the accesses say double. Reverse and
   forward mode against the analytic derivative. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

typedef union { long l; double d; } U;
typedef struct { U u; double w; } S;

double f(double x) {
  S a, b;
  a.u.d = x * x;
  a.w = sin(x);
  b = a;
  return b.u.d * b.w;
}

int main(void) {
  const double x = 1.3, want = 2 * x * sin(x) + x * x * cos(x);
  check("df", __enzyme_autodiff((void *)f, x), want);
  check("dot_f", __enzyme_fwddiff((void *)f, x, 0.5), 0.5 * want);
  return failed != 0;
}
