/* The function to differentiate reaches the marker as a parameter of a checking helper that the
   program calls once per function, `check("f1", f1, ...); check("f2", f2, ...); ...`: a pattern
   of users' own test code. LLVM inlines an external helper into every caller and keeps its
   external copy, whose marker has no function known at compile time; a helper it does not
   inline (too big, noinline, called through another helper) keeps the pointer a parameter at
   every call site. Both were refused ("the first argument of __enzyme_autodiff must be a
   function known at compile time"): the callers all pass known functions, so the derivative is
   one of theirs, chosen at run time. Reverse mode against central differences, forward mode
   against reverse. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check_value(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const, enzyme_out;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

typedef struct { double a, b; } Params;
typedef double (*Fn)(double, const Params *);

static double f1(double x, const Params *p) { return sin(x) * x * p->a; }
static double f2(double x, const Params *p) { return exp(p->b * x) - x; }
static double f3(double x, const Params *p) { return x * x * x + p->a; }
static double f4(double x, const Params *p) { return log(x) * x * p->b; }
static double f5(double x, const Params *p) { return sqrt(x) + x / p->a; }
static double f6(double x, const Params *p) { return cos(x) * p->a * p->b; }

/* external, small: inlined into main, its external copy left */
int check(const char *name, Fn f, double x, const Params *p) {
  double d = __enzyme_autodiff((void *)f, x, enzyme_const, p);
  double h = 1e-6, fd = (f(x + h, p) - f(x - h, p)) / (2 * h);
  char label[32];
  snprintf(label, sizeof label, "%s_rev", name);
  check_value(label, d, fd);
  snprintf(label, sizeof label, "%s_fwd", name);
  check_value(label, __enzyme_fwddiff((void *)f, x, 1.0, enzyme_const, p), d);
  return 0;
}

/* kept a call: the pointer stays a parameter, handed on by a second helper */
__attribute__((noinline)) static double slope(Fn f, double x, const Params *p) {
  return __enzyme_autodiff((void *)f, x, enzyme_const, p);
}
__attribute__((noinline)) static void check_through(const char *name, Fn f, double x,
                                                    const Params *p) {
  double h = 1e-6, fd = (f(x + h, p) - f(x - h, p)) / (2 * h);
  char label[32];
  snprintf(label, sizeof label, "%s_nested", name);
  check_value(label, slope(f, x, p), fd);
}

int main(void) {
  Params p = {2.0, 0.5};
  check("f1", f1, 0.7, &p);
  check("f2", f2, 0.7, &p);
  check("f3", f3, 0.7, &p);
  check("f4", f4, 0.7, &p);
  check("f5", f5, 0.7, &p);
  check("f6", f6, 0.7, &p);
  check_through("f1", f1, 1.3, &p);
  check_through("f4", f4, 1.3, &p);
  check_through("f6", f6, 1.3, &p);
  return failed != 0;
}
