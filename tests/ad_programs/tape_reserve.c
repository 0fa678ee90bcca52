/* Loops whose trip count is known on entry reserve their tape records once and push unchecked
   (enzyme_cc/ad/plan/tape_reserve.py, docs/performance.md "d"): the count read from the exit test must
   be exact for every counter shape, or the loop's exit check aborts. Counting up and down, a
   stride of 3, an unsigned char counter that wraps around, a constant count nested in a
   run-time loop, loops LLVM unrolls with a remainder loop (entered or not), a loop that calls a
   function pushing on the same tape, and a loop that is not entered at all. */
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
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
static double rnd(int k) { return sin(1.3 + 7.1 * k); }
static double dotp(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

enum { N = 23 };

/* every iteration tapes the loop-carried s (a product chain) */
double up(const double *x, int n) {
  double s = 1.0;
  for (int i = 0; i < n; i++) s = s * sin(x[i]) + x[i] * s;
  return s;
}

double down(const double *x, int n) {
  double s = 0.5;
  for (int i = n - 1; i >= 0; i--) s = s * cos(x[i]) + s * s * 0.1;
  return s;
}

double stride3(const double *x, int n) {
  double s = 1.0;
  for (int i = 1; i < n; i += 3) s = s * x[i] + sin(s);
  return s;
}

/* n = 23: from 253 to 6 through 255 -> 0: 9 iterations, counted modulo 256 */
double wraps(const double *x, int n) {
  double s = 1.0;
  unsigned char lo = (unsigned char)(11 * n), hi = (unsigned char)(n - 17);
  for (unsigned char c = lo; c != hi; c++) s = s * sin(x[c % 23]) + 0.3 * s;
  return s;
}

/* a constant count inside a loop that runs n / 4 times */
double nested(const double *x, int n) {
  double s = 0.25;
  for (int r = 0; r < n / 4; r++) {
    double t = x[r];
    for (int k = 0; k < 200; k++) t = t * cos(x[(r + k) % 23]) + 0.001 * k;
    s = s * t + sin(s);
  }
  return s;
}

/* LLVM unrolls this with a remainder loop; m = 0 skips it, m = 1..3 enter it */
double remainder_loop(const double *x, int n) {
  double s = 0;
  for (int m = 0; m < 5; m++) {
    double t = 1.0;
    for (int i = 0; i < n - m * 5; i++) t = t * x[i] + t * t * 0.01;
    s += t;
  }
  return s;
}

/* the callee pushes on the same tape: this loop keeps checked pushes */
__attribute__((noinline)) double step(double s, double v) {
  for (int k = 0; k < 3; k++) s = s * sin(v + s);
  return s;
}
double calls(const double *x, int n) {
  double s = 0.7;
  for (int i = 0; i < n; i++) s = step(s, x[i]) * s + x[i];
  return s;
}

/* n - 40 < 0: the loop is never entered and reserves nothing */
double empty(const double *x, int n) {
  double s = x[0];
  for (int i = 0; i < n - 40; i++) s = s * sin(x[i]);
  return s * s;
}

static double fd(double (*f)(const double *, int), double *x, int n, int k) {
  double h = 1e-6, x0 = x[k];
  x[k] = x0 + h;
  double fp = f(x, n);
  x[k] = x0 - h;
  double fm = f(x, n);
  x[k] = x0;
  return (fp - fm) / (2 * h);
}

/* a macro: __enzyme_autodiff needs the function itself, not a pointer chosen at run time */
#define TEST(f, x, n)                                                                  \
  do {                                                                                \
    double dx[N] = {0}, v[N];                                                         \
    __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, n);                 \
    for (int k = 0; k < N; k++) checki(#f, k, dx[k], fd(f, x, n, k));                 \
    for (int k = 0; k < N; k++) v[k] = rnd(k);                                        \
    check("dot_" #f, __enzyme_fwddiff((void *)f, enzyme_dup, x, v, enzyme_const, n),  \
          dotp(v, dx, N));                                                            \
  } while (0)

int main(void) {
  double x[N];
  for (int k = 0; k < N; k++) x[k] = 0.3 + 0.6 * sin(1.0 + 2.3 * k);
  TEST(up, x, N);
  TEST(down, x, N);
  TEST(stride3, x, N);
  TEST(wraps, x, N);
  TEST(nested, x, N);
  TEST(remainder_loop, x, N);
  TEST(calls, x, N);
  TEST(empty, x, N);
  TEST(up, x, 7);           /* the same derivative again: the tape buffer is reused */
  return report();
}
