/* Simulation state in mutable globals, set in one function and read in others (none of them
   takes an active argument but the first): the globals get shadows in every function of the
   call tree, those functions are differentiated, and each derivative starts from zero shadows.
   Reverse, forward and width-2 vector forward mode against central finite differences; the
   gradient is taken twice to check nothing carries over between calls. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
typedef struct { double d[2]; } V2;
V2 __enzyme_fwddiff2(void *, ...) __asm__("__enzyme_fwddiff");
int enzyme_width;

#define N 8
double state[N];
double total;

__attribute__((noinline)) void init(double x) {
  for (int i = 0; i < N; i++) state[i] = sin(x * (i + 1));
}
__attribute__((noinline)) void step(void) {
  for (int i = 1; i < N; i++) state[i] += 0.5 * state[i - 1] * state[i];
}
__attribute__((noinline)) double energy(void) {
  double e = 0;
  for (int i = 0; i < N; i++) e += state[i] * state[i];
  total += e;                /* read before written: its entry value is a constant */
  return e;
}
double run(double x) {
  init(x);
  step();
  step();
  return energy() + total;
}

int main(void) {
  const double x = 0.3, h = 1e-6;
  total = 0;
  double fp = run(x + h);
  total = 0;
  double fd = (fp - run(x - h)) / (2 * h);
  total = 0;
  double g = __enzyme_autodiff((void *)run, x);
  check("grad", g, fd);
  total = 0;
  check("grad_again", __enzyme_autodiff((void *)run, x), fd);
  total = 0;
  check("forward", __enzyme_fwddiff((void *)run, x, 1.0), fd);
  total = 0;
  V2 v = __enzyme_fwddiff2((void *)run, enzyme_width, 2, x, 1.0, -2.0);
  check("vector_0", v.d[0], fd);
  check("vector_1", v.d[1], -2 * fd);
  return failed != 0;
}
