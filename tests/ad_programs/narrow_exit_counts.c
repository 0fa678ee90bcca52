/* Loops over an int index from a start known at run time (`for (int i = lo; i <= hi; i++)`, lo
   negative here): the optimizer widens the index to 64 bits and tests the truncation of its
   increment against the 32-bit bound. The reverse sweep enters each inner loop at its last
   iteration, whose index is now computed from the start and the bound modulo 2^32
   (ad/structure/exit_count.py) instead of pushed on the tape once per entry. Checked against
   central finite differences and forward mode. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

#define N 40
__attribute__((noinline)) double rows(const double *x, int lo, int hi, int reps) {
  double s = 0;
  for (int r = 0; r < reps; r++) {
    _Pragma("clang loop unroll(disable)")
    for (int i = lo + r; i <= hi - r; i++) s += sin(x[i] * (r + 1)) * x[i + 1];
  }
  return s;
}

double f(const double *x, int lo, int hi) {
  return rows(x + 20, lo, hi, 6) + 0.5 * rows(x + 20, hi - 3, hi, 2) +
         0.25 * rows(x + 20, 0, 3, 4);     /* (r = 2, 3: the inner loop does not run) */
}

int main(void) {
  double x[N], dx[N] = {0}, v[N], h = 1e-6;
  for (int i = 0; i < N; i++) { x[i] = 0.3 + 0.5 * sin(1.7 * i); v[i] = cos(0.9 * i); }
  int lo = -17, hi = 15;
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, lo, enzyme_const, hi);
  double jv = 0, dot = 0;
  for (int i = 0; i < N; i++) {
    char label[32];
    double keep = x[i];
    x[i] = keep + h;
    double up = f(x, lo, hi);
    x[i] = keep - h;
    double down = f(x, lo, hi);
    x[i] = keep;
    snprintf(label, sizeof label, "dx[%d]", i);
    check(label, dx[i], (up - down) / (2 * h));
    dot += dx[i] * v[i];
  }
  jv = __enzyme_fwddiff((void *)f, enzyme_dup, x, v, enzyme_const, lo, enzyme_const, hi);
  check("Jv", jv, dot);
  printf(failed ? "FAILED\n" : "ok\n");
  return failed != 0;
}
