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
/* vector forward mode: lane k (entry i >= 0) of a width-N call versus a width-1 call */
static void checkv(const char *name, int lane, int i, double got, double want) {
  char buf[64];
  if (i < 0) snprintf(buf, sizeof buf, "vec_%s_%d", name, lane);
  else snprintf(buf, sizeof buf, "vec_%s_%d_%d", name, lane, i);
  check(buf, got, want);
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
int enzyme_width;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
typedef struct { double d[4]; } V4;
V4 __enzyme_fwddiff4(void *, ...) __asm__("__enzyme_fwddiff");
typedef struct { double d[2]; } V2;
V2 __enzyme_fwddiff2(void *, ...) __asm__("__enzyme_fwddiff");

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
  /* vector forward mode: several tangents of x in one call versus one width-1 call each */
  const double v4[4] = {sin(8.4), sin(15.5), sin(22.6), sin(29.7)};
  for (int k = 0; k < 3; k++) {
    const char *names[3] = {"dispatch_sq", "dispatch_cube", "dispatch_sin"};
    V2 t2 = __enzyme_fwddiff2((void *)dispatch, enzyme_width, 2, x, v4[0], v4[1], k);
    for (int l = 0; l < 2; l++) checkv(names[k], l, -1, t2.d[l], __enzyme_fwddiff((void *)dispatch, x, v4[l], k));
  }
  V4 t4 = __enzyme_fwddiff4((void *)higher_order, enzyme_width, 4, x, v4[0], v4[1], v4[2], v4[3]);
  for (int l = 0; l < 4; l++) checkv("higher_order", l, -1, t4.d[l], __enzyme_fwddiff((void *)higher_order, x, v4[l]));
  return report();
}
