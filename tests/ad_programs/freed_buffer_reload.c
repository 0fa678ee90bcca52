/* Constants in a malloc'd buffer (no derivative) read by the gradient's terms, then freed
   before the function returns, and the freed chunks reused by later allocations: the reverse
   sweep must not re-read the buffer after its free (it once did: garbage or NaN gradients).
   Also through an address kept as an integer and made back into a pointer, with a dangling
   constant for the empty case (Rust's Vec does this). Reverse mode against central
   differences, forward against reverse. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
static int failed;
static void check(const char *name, int i, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s[%d] %.12g %.12g%s\n", name, i, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

static void churn(long n) {     /* reuses the freed chunks */
  for (int r = 0; r < 8; r++) {
    double *junk = malloc(n * 16);
    for (long j = 0; j < 2 * n; j++) junk[j] = 1e6;
    free(junk);
  }
}

__attribute__((noinline)) double springs(const double *x, long n) {
  double *k = malloc(n * sizeof *k);
  for (long i = 0; i < n; i++) k[i] = 1.0 + i;
  double s = 0;
  for (long i = 0; i + 1 < n; i++) {
    double d = x[i + 1] - x[i] - 0.5;
    s += 0.5 * k[i] * d * d;
  }
  free(k);
  churn(n);
  return s;
}

__attribute__((noinline)) double springs_intptr(const double *x, long n) {
  uintptr_t a = n ? (uintptr_t)malloc(n * 16) : 8;
  double *k = (double *)a;
  for (long i = 0; i < n; i++) { k[2 * i] = 1.0 + i; k[2 * i + 1] = 0.5; }
  double s = 0;
  for (long i = 0; i + 1 < n; i++) {
    double d = x[i + 1] - x[i] - k[2 * i + 1];
    s += 0.5 * k[2 * i] * d * d;
  }
  for (long i = 0; i < n; i++) s += sin(x[i]);
  free(k);
  churn(n);
  return s;
}

#define TEST(f)                                                                          \
  do {                                                                                   \
    double x[4] = {0.1, 0.7, 1.6, 2.0}, dx[4] = {0}, v[4], vd = 0;                       \
    __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, 4L);                   \
    for (int i = 0; i < 4; i++) {                                                        \
      double h = 1e-6, s = x[i];                                                         \
      x[i] = s + h;                                                                      \
      double a = f(x, 4);                                                                \
      x[i] = s - h;                                                                      \
      double b = f(x, 4);                                                                \
      x[i] = s;                                                                          \
      check(#f, i, dx[i], (a - b) / (2 * h));                                            \
      v[i] = sin(3.0 + i);                                                               \
      vd += v[i] * dx[i];                                                                \
    }                                                                                    \
    check(#f "_dot", 0, __enzyme_fwddiff((void *)f, enzyme_dup, x, v, enzyme_const, 4L), vd); \
  } while (0)

int main(void) {
  TEST(springs);
  TEST(springs_intptr);
  return failed != 0;
}
