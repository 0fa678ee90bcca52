/* A marker whose function is read from a constant table of known functions (what LLVM makes of a
   `switch` or a Rust `match` whose arms pick a function: a lookup table, loaded at the marker
   call). The derivative dispatches on the loaded pointer. Each function's gradient against
   central differences. */
#include <math.h>
#include <stdio.h>
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
double f0(const double *x, int n) { double s = 0; for (int i = 0; i < n; i++) s += sin(x[i]) * x[i]; return s; }
double f1(const double *x, int n) { double s = 1; for (int i = 0; i < n; i++) s *= 1.0 + 0.1 * x[i]; return s; }
double f2(const double *x, int n) { double s = 0; for (int i = 0; i + 1 < n; i++) s += x[i] * exp(-x[i + 1]); return s; }
double f3(const double *x, int n) { double s = 0; for (int i = 0; i < n; i++) s += sqrt(1 + x[i] * x[i]); return s; }
typedef double (*fn_t)(const double *, int);
static fn_t const table[4] = {f0, f1, f2, f3};
int main(int argc, char **argv) {
  (void)argv;
  enum { N = 4 };
  for (int k = 0; k < 4; k++) {
    double x[N] = {0.3, -0.7, 1.1, 0.4}, dx[N] = {0};
    int which = (k + argc - 1) % 4;
    __enzyme_autodiff((void *)table[which], enzyme_dup, x, dx, enzyme_const, N);
    fn_t f = table[which];
    for (int i = 0; i < N; i++) {
      double xp[N], xm[N], h = 1e-6;
      for (int j = 0; j < N; j++) xp[j] = xm[j] = x[j];
      xp[i] += h; xm[i] -= h;
      char label[32];
      snprintf(label, sizeof label, "f%d_d%d", which, i);
      check(label, dx[i], (f(xp, N) - f(xm, N)) / (2 * h));
    }
    double v[N] = {0.2, -0.5, 0.7, 0.1}, dot = 0;
    for (int i = 0; i < N; i++) dot += v[i] * dx[i];
    char label[32];
    snprintf(label, sizeof label, "f%d_fwd", which);
    check(label, __enzyme_fwddiff((void *)table[which], enzyme_dup, x, v, enzyme_const, N), dot);
  }
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
