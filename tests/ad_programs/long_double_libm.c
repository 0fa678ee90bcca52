/* long double (x86_fp80) through the C math library's `l` functions: expl, logl, powl, sqrtl,
   sinl, cosl, tanhl, atan2l, hypotl, erfl, cbrtl, log1pl, fabsl, fmaxl (once refused: "no
   derivative rule for call to 'expl'"). Reverse mode of a double function computing in long
   double, and forward mode of a long double function, against central differences. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
long double __enzyme_fwddiff(void *, ...);

long double mix(long double a, long double b) {
  long double s = expl(0.3L * a) * sqrtl(1.0L + b * b) + powl(fabsl(a) + 1.0L, 1.5L);
  s += sinl(a * b) * cosl(b) + tanhl(a - b) + atan2l(a, b + 3.0L) + hypotl(a, b);
  s += erfl(0.5L * a) + cbrtl(2.0L + b) + log1pl(a * a) + logl(2.0L + b * b);
  return s + fmaxl(a, 0.25L * b);
}

double f(const double *x, int n) {
  long double s = 0;
  for (int i = 0; i + 1 < n; i++) s += mix((long double)x[i], (long double)x[i + 1]);
  return (double)s;
}

int main(void) {
  double x[4] = {0.5, -0.7, 1.3, 0.2}, dx[4] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, 4);
  char name[32];
  for (int i = 0; i < 4; i++) {
    double h = 1e-6, keep = x[i], fp, fm;
    x[i] = keep + h; fp = f(x, 4);
    x[i] = keep - h; fm = f(x, 4);
    x[i] = keep;
    snprintf(name, sizeof name, "rev_dx%d", i);
    check(name, dx[i], (fp - fm) / (2 * h));
  }
  long double a = 0.9L, b = -0.4L, h = 1e-7L;
  check("fwd_da", (double)__enzyme_fwddiff((void *)mix, a, 1.0L, b, 0.0L),
        (double)((mix(a + h, b) - mix(a - h, b)) / (2 * h)));
  check("fwd_db", (double)__enzyme_fwddiff((void *)mix, a, 0.0L, b, 1.0L),
        (double)((mix(a, b + h) - mix(a, b - h)) / (2 * h)));
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
