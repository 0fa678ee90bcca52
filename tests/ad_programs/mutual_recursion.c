/* Mutually recursive functions alternating two formulas down to a base case. */
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
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

double odd_step(double x, int n);

double even_step(double x, int n) { return n == 0 ? x : sin(odd_step(x, n - 1)); }
double odd_step(double x, int n) { return n == 0 ? x * x : 0.5 * even_step(x, n - 1) * x; }

int main(void) {
  const double h = 1e-6;
  double x = 0.9;
  for (int n = 3; n <= 6; n++)
    checki("even_step", n, __enzyme_autodiff((void *)even_step, x, n),
           (even_step(x + h, n) - even_step(x - h, n)) / (2 * h));
  /* forward tangent along t versus t * reverse derivative */
  for (int n = 3; n <= 6; n++)
    checki("dot_even_step", n, __enzyme_fwddiff((void *)even_step, x, rnd(n), n),
           rnd(n) * __enzyme_autodiff((void *)even_step, x, n));
  /* vector forward mode: 4 tangents of x in one call versus 4 width-1 calls */
  for (int n = 3; n <= 6; n++) {
    char name[32];
    snprintf(name, sizeof name, "even_step%d", n);
    V4 t = __enzyme_fwddiff4((void *)even_step, enzyme_width, 4, x, rnd(10), rnd(11), rnd(12), rnd(13), n);
    for (int k = 0; k < 4; k++) checkv(name, k, -1, t.d[k], __enzyme_fwddiff((void *)even_step, x, rnd(10 + k), n));
  }
  return report();
}
