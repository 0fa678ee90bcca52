/* Indirect calls: a table of function pointers indexed by a constant int, and a non-inlined
   higher-order helper receiving the function to apply. */
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
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

static double sq(double x) { return x * x; }
static double cube(double x) { return x * x * x; }
static double sine(double x) { return sin(x); }
static double (*const table[3])(double) = {sq, cube, sine};

double dispatch(double x, int k) { return table[k](x) * 2.0; }

__attribute__((noinline)) static double apply(double (*f)(double), double x) { return f(x) + x; }

double higher_order(double x) { return apply(sq, x) * apply(sine, x); }

int main(void) {
  double x = 0.6;
  check("dispatch_sq", __enzyme_autodiff((void *)dispatch, x, 0), 4 * x);
  check("dispatch_cube", __enzyme_autodiff((void *)dispatch, x, 1), 6 * x * x);
  check("dispatch_sin", __enzyme_autodiff((void *)dispatch, x, 2), 2 * cos(x));
  double a = x * x + x, b = sin(x) + x;
  check("higher_order", __enzyme_autodiff((void *)higher_order, x), (2 * x + 1) * b + a * (cos(x) + 1));
  /* forward/reverse dot test: the tangent along a direction v equals v * derivative */
  const double v = sin(1.3);
  check("dot_dispatch_cube", __enzyme_fwddiff((void *)dispatch, x, v, 1), v * __enzyme_autodiff((void *)dispatch, x, 1));
  check("dot_dispatch_sin", __enzyme_fwddiff((void *)dispatch, x, v, 2), v * __enzyme_autodiff((void *)dispatch, x, 2));
  check("dot_higher_order", __enzyme_fwddiff((void *)higher_order, x, v), v * __enzyme_autodiff((void *)higher_order, x));
  return report();
}
