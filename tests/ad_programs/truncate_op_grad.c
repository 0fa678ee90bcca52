/* Enzyme's truncation API inside differentiated code: an op-mode truncated copy (double
   arithmetic computed in float, and in half) is called by the function we differentiate.
   Values: bit-exact equal to the same computation written by hand in float / _Float16 (one
   rounding per operation). Gradients: through fptrunc/fpext and float arithmetic, checked
   against the analytic derivative and forward mode against reverse mode. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
/* bit-exact: the truncated copy computes exactly what the hand-written narrow code does */
static void check_exact(const char *name, double got, double want) {
  int ok = got == want;
  printf("CHECK %s %.17g %.17g%s\n", name, got, want, ok ? "" : "  <-- FAILED (not bit-exact)");
  failed += !ok;
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
void *__enzyme_truncate_op_func(void *, int, int);
volatile double seed = 1.3;   /* inputs the compiler cannot fold */
static double rnd(int k) { return sin(seed + 7.1 * k); }

/* the function truncated, and a callee it truncates with it */
static double term(double v) { return v * v * 0.5 + sin(v); }
static double energy(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += term(x[i]);
  return s;
}
static float term_f(float v) { return v * v * 0.5f + sinf(v); }
static float energy_f(const float *x, int n) {
  float s = 0;
  for (int i = 0; i < n; i++) s += term_f(x[i]);
  return s;
}
/* one operation per statement, so no contraction: the half version rounds after each one */
static double ratio(double a, double b) {
  double p = a * b;
  double q = p + 0.1;
  double r = sqrt(q);
  return r / (a - b);
}
static _Float16 ratio_h(_Float16 a, _Float16 b) {
  _Float16 p = (_Float16)((float)a * (float)b);
  _Float16 q = (_Float16)((float)p + (float)(_Float16)0.1);
  _Float16 r = (_Float16)sqrtf((float)q);
  return (_Float16)((float)r / (float)(_Float16)((float)a - (float)b));
}

typedef double (*EnergyFn)(const double *, int);
typedef double (*RatioFn)(double, double);

/* differentiated: calls the float copy of energy */
double model(const double *x, int n) {
  EnergyFn e32 = (EnergyFn)__enzyme_truncate_op_func((void *)energy, 64, 32);
  return e32(x, n) * x[0];
}

int main(void) {
  enum { N = 5 };
  double x[N], dx[N] = {0};
  float xf[N];
  for (int i = 0; i < N; i++) xf[i] = (float)(x[i] = rnd(i));
  EnergyFn e32 = (EnergyFn)__enzyme_truncate_op_func((void *)energy, 64, 32);
  check_exact("energy_in_float", e32(x, N), energy_f(xf, N));
  RatioFn r16 = (RatioFn)__enzyme_truncate_op_func((void *)ratio, 64, 16);
  double a = rnd(7), b = rnd(8);
  check_exact("ratio_in_half", r16(a, b), (double)ratio_h((_Float16)a, (_Float16)b));

  __enzyme_autodiff((void *)model, enzyme_dup, x, dx, enzyme_const, N);
  double e = energy(x, N);
  for (int j = 0; j < N; j++) {
    char name[32];
    snprintf(name, sizeof name, "dmodel[%d]", j);
    check(name, dx[j], (x[j] + cos(x[j])) * x[0] + (j == 0 ? e : 0));
  }
  /* the truncated copy itself differentiated: the marker's function is the copy */
  double de[N] = {0};
  __enzyme_autodiff(__enzyme_truncate_op_func((void *)energy, 64, 32), enzyme_dup, x, de,
                    enzyme_const, N);
  for (int j = 0; j < N; j++) {
    char name[32];
    snprintf(name, sizeof name, "denergy32[%d]", j);
    check(name, de[j], x[j] + cos(x[j]));
  }
  double v[N], jv = 0;
  for (int i = 0; i < N; i++) v[i] = rnd(20 + i), jv += v[i] * dx[i];
  check("dot_model", __enzyme_fwddiff((void *)model, enzyme_dup, x, v, enzyme_const, N), jv);
  return report();
}
