/* Paper Figure 4 (right): f writes over the memory that g reads, so g needs an augmented forward
   pass that caches x[0] for its reverse pass. */
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
void __enzyme_autodiff(void *, ...);
void __enzyme_fwddiff(void *, ...);

__attribute__((noinline)) double g(const double *x) { return *x * *x; }

void f(double *x) { *x = g(x); }            /* x <- x^2 */
void f_twice(double *x) { *x = g(x); *x = g(x); }  /* x <- x^4 */

int main(void) {
  double x = 1.5, dx = 1;
  __enzyme_autodiff((void *)f, &x, &dx);
  check("f_value", x, 1.5 * 1.5);
  check("f_dx", dx, 2 * 1.5);

  double y = 1.25, dy = 1;
  __enzyme_autodiff((void *)f_twice, &y, &dy);
  check("f_twice_value", y, pow(1.25, 4));
  check("f_twice_dx", dy, 4 * pow(1.25, 3));
  /* forward/reverse dot test (x is both input and output): with a direction v and a weight w,
     (J v) w from forward mode equals v (J^T w) from reverse mode */
  const double v = sin(1.3), w = sin(8.4);
  double jv = v, jtw = w;
  x = 1.5;
  __enzyme_fwddiff((void *)f, &x, &jv);
  x = 1.5;
  __enzyme_autodiff((void *)f, &x, &jtw);
  check("dot_f", jv * w, v * jtw);
  jv = v;
  jtw = w;
  y = 1.25;
  __enzyme_fwddiff((void *)f_twice, &y, &jv);
  y = 1.25;
  __enzyme_autodiff((void *)f_twice, &y, &jtw);
  check("dot_f_twice", jv * w, v * jtw);
  return report();
}
