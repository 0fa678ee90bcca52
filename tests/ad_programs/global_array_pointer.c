/* Pointers held in globals that point at global arrays of active data: set in one function and
   used in another, set before the derivative starts (by the caller, or a static initializer,
   also at an offset into the array and as a field of a global struct). The shadow of each
   pointer global must point at the shadow of the array. Reverse and forward mode (also vector
   forward) against the analytic derivative. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
int enzyme_width;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
typedef struct { double d[2]; } V2;
V2 __enzyme_fwddiff2(void *, ...) __asm__("__enzyme_fwddiff");

#define N 4
double data[N];
double *gp;                                      /* set by setup() */
double table[N + 2];
double *mid = &table[1];                         /* static initializer, at an offset */
struct { double *p; int n; } view = {table, N + 2};

__attribute__((noinline)) void setup(void) { gp = data; }
__attribute__((noinline)) void fill(double x) {
  for (int i = 0; i < N; i++) data[i] = x * (i + 1);
}
__attribute__((noinline)) double sum_squares(void) {
  double s = 0;
  for (int i = 0; i < N; i++) s += gp[i] * gp[i];
  return s;
}

/* sets and uses gp in the same call: sum (x i)^2 = x^2 * 14 */
double same_call(double x) {
  setup();
  double s = 0;
  for (int i = 0; i < N; i++) {
    gp[i] = x * i;
    s += gp[i] * gp[i];
  }
  return s;
}

/* gp set by main before the derivative: sum (x (i+1))^2 = x^2 * 30 */
double set_before(double x) {
  fill(x);
  return sum_squares();
}

/* writes through mid (table + 1), reads through view.p: sum sin(x k) * table[k] ... */
__attribute__((noinline)) void write_mid(double x) {
  for (int i = 0; i < N; i++) mid[i] = sin(x * (i + 1));
}
__attribute__((noinline)) double read_view(double x) {
  double s = 0;
  for (int i = 0; i < view.n; i++) s += view.p[i] * view.p[i] * x;
  return s;
}
double through_init(double x) {
  write_mid(x);
  return read_view(x);
}
static double through_init_d(double x) {      /* table[0], table[N+1] stay 0 */
  double s = 0, d = 0;
  for (int i = 0; i < N; i++) {
    double v = sin(x * (i + 1));
    s += v * v;
    d += 2 * v * cos(x * (i + 1)) * (i + 1) * x;
  }
  return s + d;
}

int main(void) {
  const double x = 0.7;
  check("same_call_reverse", __enzyme_autodiff((void *)same_call, x), 2 * x * 14);
  check("same_call_forward", __enzyme_fwddiff((void *)same_call, x, 1.0), 2 * x * 14);
  setup();
  check("set_before_reverse", __enzyme_autodiff((void *)set_before, x), 2 * x * 30);
  check("set_before_forward", __enzyme_fwddiff((void *)set_before, x, 1.0), 2 * x * 30);
  check("init_reverse", __enzyme_autodiff((void *)through_init, x), through_init_d(x));
  check("init_forward", __enzyme_fwddiff((void *)through_init, x, 1.0), through_init_d(x));
  /* vector forward mode: two tangents of x in one call */
  V2 t = __enzyme_fwddiff2((void *)through_init, enzyme_width, 2, x, 1.0, -0.5);
  check("init_vec_0", t.d[0], through_init_d(x));
  check("init_vec_1", t.d[1], -0.5 * through_init_d(x));
  t = __enzyme_fwddiff2((void *)set_before, enzyme_width, 2, x, 2.0, 0.25);
  check("set_before_vec_0", t.d[0], 2.0 * 2 * x * 30);
  check("set_before_vec_1", t.d[1], 0.25 * 2 * x * 30);
  return report();
}
