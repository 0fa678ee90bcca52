/* Mixed float/double: float data accumulated in double, and a function of a double and a float
   both active (derivatives returned as {double, float}). */
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
typedef struct { double dx; float dy; } DF;
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
DF __enzyme_autodiff_df(void *, ...);
double __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

double sumsq_f(const float *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += (double)x[i] * x[i];
  return s;
}

/* float arithmetic on a double input, rounded back */
double mixed(double x, float y) {
  float t = (float)x * y + sinf(y);
  return (double)t * x;
}

int main(void) {
  float x[4] = {0.5f, -1.25f, 2.0f, 0.75f}, dx[4] = {0};
  __enzyme_autodiff((void *)sumsq_f, enzyme_dup, x, dx, enzyme_const, 4);
  for (int i = 0; i < 4; i++) checki("sumsq_f", i, dx[i], 2.0 * x[i]);
  /* forward tangent along v versus v . (reverse gradient) */
  float v[4];
  double vg = 0;
  for (int i = 0; i < 4; i++) v[i] = (float)rnd(i), vg += (double)v[i] * dx[i];
  check("dot_sumsq_f", __enzyme_fwddiff((void *)sumsq_f, enzyme_dup, x, v, enzyme_const, 4), vg);
  double a = 1.5;
  float b = 0.5f;
  DF g = __enzyme_autodiff_df((void *)mixed, a, b);
  double t = a * b + sin(b);
  check("mixed_dx", g.dx, t + a * b);
  check("mixed_dy", g.dy, a * (a + cos(b)));
  const double ta = rnd(4);
  const float tb = (float)rnd(5);
  check("dot_mixed", __enzyme_fwddiff((void *)mixed, a, ta, b, tb), ta * g.dx + tb * g.dy);
  return report();
}
