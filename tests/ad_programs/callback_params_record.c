// GSL's calling convention for user functions: a record of a function pointer and a `void *`
// context (gsl_function), the context a local record holding constant data (enzyme_const) beside
// the active parameters. The integration routines stay out of line and call the function
// through the pointer, with two possible targets; one routine hands the record on to another.
// The context's data field has no shadow: the integrands must take what they read through it
// as constant (refused before: "a pointer to double data without a shadow ... is stored into
// memory that has one").
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-7 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

typedef struct { double (*function)(double x, void *params); void *params; } function_t;
struct context { const double *data; const double *p; int n; };

// sum_k p[k] data[k] x^k
static double polynomial(double x, void *vp) {
  const struct context *c = vp;
  double s = 0, xk = 1;
  for (int k = 0; k < c->n; k++) { s += c->p[k] * c->data[k] * xk; xk *= x; }
  return s;
}
// data[0] exp(-p[0] x) + p[1]^2 data[1]
static double decay(double x, void *vp) {
  const struct context *c = vp;
  return c->data[0] * exp(-c->p[0] * x) + c->p[1] * c->p[1] * c->data[1];
}

__attribute__((noinline)) static double midpoint(const function_t *f, double a, double b, int m) {
  double h = (b - a) / m, s = 0;
  for (int i = 0; i < m; i++) s += f->function(a + (i + 0.5) * h, f->params);
  return s * h;
}
// Simpson's rule on [a, b] with 2m panels, computed from two midpoint sums and the ends
__attribute__((noinline)) static double simpson(const function_t *f, double a, double b, int m) {
  double ends = f->function(a, f->params) + f->function(b, f->params);
  double h = (b - a) / (2 * m), inner = 0;
  for (int i = 1; i < 2 * m; i++) inner += (i % 2 ? 4 : 2) * f->function(a + i * h, f->params);
  return h / 3 * (ends + inner) + 0 * midpoint(f, a, b, 1);
}

static double objective(const double *data, const double *p, int which) {
  struct context c = {data, p, 3};
  function_t f = {which ? decay : polynomial, &c};
  return which ? midpoint(&f, 0.0, 1.0, 200) : simpson(&f, 0.0, 1.0, 4);
}
static double poly_integral(const double *data, const double *p) { return objective(data, p, 0); }
static double decay_integral(const double *data, const double *p) { return objective(data, p, 1); }

int main(void) {
  const double data[3] = {1.5, -2.0, 0.75};
  double p[3] = {0.4, 1.1, -0.3}, dp[3] = {0, 0, 0};
  __enzyme_autodiff((void *)poly_integral, enzyme_const, data, enzyme_dup, p, dp);
  for (int k = 0; k < 3; k++) {       // Simpson is exact for these: data[k] / (k + 1)
    char name[16];
    snprintf(name, sizeof name, "poly.dp[%d]", k);
    check(name, dp[k], data[k] / (k + 1));
  }
  double v[3] = {0.3, -0.7, 1.1};
  check("poly.fwd.rev", __enzyme_fwddiff((void *)poly_integral, enzyme_const, data, enzyme_dup, p,
                                          v), v[0] * dp[0] + v[1] * dp[1] + v[2] * dp[2]);

  double q[3] = {0.9, 0.6, 0}, dq[3] = {0, 0, 0};
  __enzyme_autodiff((void *)decay_integral, enzyme_const, data, enzyme_dup, q, dq);
  for (int k = 0; k < 2; k++) {
    double h = 1e-6, keep = q[k];
    q[k] = keep + h;
    double up = decay_integral(data, q);
    q[k] = keep - h;
    double down = decay_integral(data, q);
    q[k] = keep;
    char name[16];
    snprintf(name, sizeof name, "decay.dq[%d]", k);
    check(name, dq[k], (up - down) / (2 * h));
  }
  check("decay.fwd.rev", __enzyme_fwddiff((void *)decay_integral, enzyme_const, data, enzyme_dup,
                                           q, v), v[0] * dq[0] + v[1] * dq[1] + v[2] * dq[2]);
  return failed != 0;
}
