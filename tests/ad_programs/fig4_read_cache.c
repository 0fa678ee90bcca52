/* Paper Figure 4 (left): total += read() * x[i]. read() has a side effect, so its results must be
   cached in the forward pass, not recomputed (re-running it would also advance the stream). */
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
/* deterministic pseudo-random direction entries */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

static const double stream[10] = {0.5, -1, 2, 3.5, -0.25, 1, 4, -2, 0.75, 1.5};
static int pos;

__attribute__((noinline)) double read_value(void) { return stream[pos++ % 10]; }

double sum(const double *x) {
  double total = 0;
  for (int i = 0; i < 10; i++) total += read_value() * x[i];
  return total;
}

int main(void) {
  double x[10], dx[10] = {0};
  for (int i = 0; i < 10; i++) x[i] = 0.1 * i;
  pos = 0;
  __enzyme_autodiff((void *)sum, x, dx);
  for (int i = 0; i < 10; i++) checki("dx", i, dx[i], stream[i]);
  check("read_calls", pos, 10);
  /* forward/reverse dot test: the tangent along a direction v equals v . gradient */
  double v[10], vdx = 0;
  for (int i = 0; i < 10; i++) { v[i] = rnd(i); vdx += v[i] * dx[i]; }
  pos = 0;
  check("dot_sum", __enzyme_fwddiff((void *)sum, x, v), vdx);
  check("fwd_read_calls", pos, 10);
  return report();
}
