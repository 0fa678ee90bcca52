/* do-while loops: a recurrence with a constant count, and one that stops on the data. */
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
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

/* s_{k+1} = s_k * x + c_k, i.e. a polynomial in x */
double dw_poly(double x, const double *c, int n) {
  double s = 0;
  int i = 0;
  do {
    s = s * x + c[i];
    i++;
  } while (i < n);
  return s;
}

/* halve until below 1: y = x / 2^k with k data dependent, result y*y */
double halve(double x) {
  double y = x;
  do { y = y * 0.5; } while (y > 1);
  return y * y;
}

int main(void) {
  double c[4] = {2, -1, 0.5, 3}, x = 1.3;
  /* s = 2x^3 - x^2 + 0.5x + 3 */
  check("dw_poly", __enzyme_autodiff((void *)dw_poly, x, enzyme_const, c, enzyme_const, 4),
        6 * x * x - 2 * x + 0.5);
  /* forward tangent along t versus t . (reverse gradient) */
  check("dot_dw_poly",
        __enzyme_fwddiff((void *)dw_poly, x, rnd(0), enzyme_const, c, enzyme_const, 4),
        rnd(0) * __enzyme_autodiff((void *)dw_poly, x, enzyme_const, c, enzyme_const, 4));
  double z = 13.0, y = z;
  do { y *= 0.5; } while (y > 1);
  check("halve", __enzyme_autodiff((void *)halve, z), 2 * y * (y / z));
  check("dot_halve", __enzyme_fwddiff((void *)halve, z, rnd(1)),
        rnd(1) * __enzyme_autodiff((void *)halve, z));
  return report();
}
