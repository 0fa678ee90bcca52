/* A library-style integrator over a C function record (`{ double (*f)(double, void *); void
   *params; }`, GSL's gsl_function), whose params is the user's context holding an enzyme_const
   array beside the active parameters. The semi-infinite variant wraps the user's record in a
   record of its own (a double, then the user's record's address: GSL's qagiu) behind a
   function of the same type, so the integrator's indirect call may reach either function with
   either record; a solver object is allocated by a function that returns NULL on its failure
   paths and checks the record it is given against NULL (GSL's ODE driver_alloc). Reverse and
   forward mode against central differences. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

typedef struct { double (*function)(double x, void *params); void *params; } func_t;
struct ctx { const double *data; const double *p; };
typedef struct { double a; func_t *f; } tail_params;
typedef struct { const func_t *f; double h; int steps; } solver;

__attribute__((noinline)) static double midpoint(const func_t *f, double lo, double hi, int n) {
  double s = 0, h = (hi - lo) / n;
  for (int i = 0; i < n; i++) s += f->function(lo + (i + 0.5) * h, f->params);
  return s * h;
}

/* x = a + (1 - t) / t maps (0, 1] onto [a, inf) */
static double tail_transform(double t, void *params) {
  tail_params *p = params;
  double x = p->a + (1 - t) / t;
  return p->f->function(x, p->f->params) / (t * t);
}

__attribute__((noinline)) static double integrate_tail(func_t *f, double a, int n) {
  tail_params p = {a, f};
  func_t g = {tail_transform, &p};
  return midpoint(&g, 0, 1, n);
}

__attribute__((noinline)) static solver *solver_alloc(const func_t *f, double h, int steps) {
  if (f == NULL) return NULL;
  solver *s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  if (steps <= 0) {
    free(s);
    return NULL;
  }
  s->f = f;
  s->h = h;
  s->steps = steps;
  return s;
}

__attribute__((noinline)) static double solver_run(const solver *s, double lo) {
  return midpoint(s->f, lo, lo + s->h * s->steps, s->steps);
}

static double decay(double x, void *params) {
  const struct ctx *c = params;
  return c->data[0] * exp(-c->p[0] * x) / (1 + c->p[1] * c->p[1] * x * x * c->data[1]);
}

static double bump(double x, void *params) {
  const struct ctx *c = params;
  return c->p[0] * sin(c->data[0] * x) + c->p[1] * c->data[1] * x * x;
}

double tail_integral(const double *data, const double *p) {
  struct ctx c = {data, p};
  func_t F = {decay, &c};
  return integrate_tail(&F, 0.0, 400);
}

double solved(const double *data, const double *p) {
  struct ctx c = {data, p};
  func_t F = {bump, &c};
  solver *s = solver_alloc(&F, 0.01, 100);
  double r = solver_run(s, 0.0);
  free(s);
  return r;
}

typedef double (*Fn)(const double *, const double *);

static void grad_check(const char *name, Fn f) {
  const double data[2] = {1.5, 0.8};
  double p[2] = {0.7, 1.3}, dp[2] = {0, 0}, v[2] = {0.3, -1.1};
  __enzyme_autodiff((void *)f, enzyme_const, data, enzyme_dup, p, dp);
  for (int k = 0; k < 2; k++) {
    double keep = p[k];
    p[k] = keep + 1e-6;
    double up = f(data, p);
    p[k] = keep - 1e-6;
    double dn = f(data, p);
    p[k] = keep;
    char buf[64];
    snprintf(buf, sizeof buf, "%s[%d]", name, k);
    check(buf, dp[k], (up - dn) / 2e-6);
  }
  char buf[64];
  snprintf(buf, sizeof buf, "dot_%s", name);
  check(buf, __enzyme_fwddiff((void *)f, enzyme_const, data, enzyme_dup, p, v),
        v[0] * dp[0] + v[1] * dp[1]);
}

int main(void) {
  grad_check("tail_integral", tail_integral);
  grad_check("solved", solved);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
