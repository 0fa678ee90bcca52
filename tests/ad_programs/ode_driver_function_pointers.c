/* An ODE driver in the style of a C numerics library (GSL's odeiv2): a system struct holds the
   user's right-hand side as a function pointer with `void *params`; a step type holds
   alloc/apply/free function pointers; the stepper state, allocated through the type's alloc
   pointer, holds malloc'd work arrays; apply() fills an optional derivative output only when
   the caller passes one (here NULL). Reverse mode against central differences and forward mode
   against reverse. (The state allocated through a function pointer had no shadow: a refusal
   with the driver inlined, a crash without; the NULL output made the callee's specialization
   refuse a store it never runs.) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

typedef struct {
  int (*function)(double t, const double y[], double dydt[], void *params);
  size_t dimension;
  void *params;
} ode_system;
typedef struct {
  void *(*alloc)(size_t dim);
  int (*apply)(void *state, size_t dim, double t, double h, double y[], double dydt_out[],
               const ode_system *sys);
  void (*free)(void *state);
} step_type;
typedef struct { const step_type *type; size_t dim; void *state; } stepper;
typedef struct { const ode_system *sys; stepper *s; double h; } driver;
typedef struct { double *k, *y0, *ytmp; } mid_state;

static void *mid_alloc(size_t dim) {
  mid_state *st = malloc(sizeof *st);
  st->k = malloc(dim * sizeof(double));
  st->y0 = malloc(dim * sizeof(double));
  st->ytmp = malloc(dim * sizeof(double));
  return st;
}
static void mid_free(void *vstate) {
  mid_state *st = vstate;
  free(st->k); free(st->y0); free(st->ytmp); free(st);
}
/* the explicit midpoint rule */
static int mid_apply(void *vstate, size_t dim, double t, double h, double y[], double dydt_out[],
                     const ode_system *sys) {
  mid_state *st = vstate;
  memcpy(st->y0, y, dim * sizeof(double));
  sys->function(t, st->y0, st->k, sys->params);
  for (size_t i = 0; i < dim; i++) st->ytmp[i] = st->y0[i] + 0.5 * h * st->k[i];
  sys->function(t + 0.5 * h, st->ytmp, st->k, sys->params);
  for (size_t i = 0; i < dim; i++) y[i] = st->y0[i] + h * st->k[i];
  if (dydt_out != NULL) sys->function(t + h, y, dydt_out, sys->params);
  return 0;
}
static const step_type mid_type = {mid_alloc, mid_apply, mid_free};
const step_type *step_mid = &mid_type;

__attribute__((noinline)) driver *driver_alloc(const ode_system *sys, const step_type *T, double h) {
  driver *d = malloc(sizeof *d);
  d->sys = sys;
  d->s = malloc(sizeof *d->s);
  d->s->type = T;
  d->s->dim = sys->dimension;
  d->s->state = T->alloc(sys->dimension);
  d->h = h;
  return d;
}
__attribute__((noinline)) void driver_free(driver *d) {
  d->s->type->free(d->s->state);
  free(d->s);
  free(d);
}
__attribute__((noinline)) int driver_apply(driver *d, double *t, unsigned long n, double y[]) {
  for (unsigned long i = 0; i < n; i++) {
    int s = d->s->type->apply(d->s->state, d->s->dim, *t, d->h, y, NULL, d->sys);
    if (s) return s;
    *t += d->h;
  }
  return 0;
}

/* ---- the user's code: a damped oscillator with a forcing term ---- */
typedef struct { double k, c, a; } osc;
static int rhs(double t, const double y[], double f[], void *params) {
  osc *p = params;
  f[0] = y[1];
  f[1] = -p->k * y[0] - p->c * y[1] + p->a * sin(t);
  return 0;
}
double simulate(osc *p, double *y0) {
  ode_system sys = {rhs, 2, p};
  driver *d = driver_alloc(&sys, step_mid, 0.1);
  double y[2] = {y0[0], y0[1]}, t = 0;
  driver_apply(d, &t, 10, y);
  driver_free(d);
  return y[0] * y[0] + 0.5 * y[1];
}

int main(void) {
  osc p = {2.0, 0.3, 0.5}, dp = {0, 0, 0}, tp = {0.3, -0.7, 0.2};
  double y0[2] = {1.0, 0.2}, dy0[2] = {0, 0}, ty0[2] = {0.5, -0.4};
  __enzyme_autodiff((void *)simulate, enzyme_dup, &p, &dp, enzyme_dup, y0, dy0);
  double *in[5] = {&p.k, &p.c, &p.a, &y0[0], &y0[1]}, grad[5] = {dp.k, dp.c, dp.a, dy0[0], dy0[1]};
  const char *names[5] = {"d/dk", "d/dc", "d/da", "d/dy0", "d/dy1"};
  for (int i = 0; i < 5; i++) {
    double h = 1e-6, o = *in[i], fp, fm;
    *in[i] = o + h; fp = simulate(&p, y0);
    *in[i] = o - h; fm = simulate(&p, y0);
    *in[i] = o;
    check(names[i], grad[i], (fp - fm) / (2 * h));
  }
  double jt = __enzyme_fwddiff((void *)simulate, enzyme_dup, &p, &tp, enzyme_dup, y0, ty0);
  check("forward.dot", jt, tp.k * dp.k + tp.c * dp.c + tp.a * dp.a + ty0[0] * dy0[0] +
                           ty0[1] * dy0[1]);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
