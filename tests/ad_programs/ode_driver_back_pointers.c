/* An ODE driver in the style of GSL's odeiv2 whose parts point back to it: the driver holds
   the user's system, a stepper and an evolve object, and the evolve object keeps the
   driver's address (`d->e->driver = d`). The user's `void *params` record holds constant data
   (passed enzyme_const) beside the active parameters. A derivative must know that the data
   pointer has no shadow wherever the record is read, also through the cycle driver -> evolve
   -> driver (refused before: "a pointer to double data without a shadow ... is stored into
   memory that has one"). The stepper's state keeps the driver's address too, stored by a
   function of its step type through a function pointer, and the step reads the step size
   back through it. The allocator frees its block through a function of its own on a
   failure path, as GSL's does. Reverse mode against central differences and against the same
   gradient with the data passed enzyme_dup with a zeroed shadow; forward mode against
   reverse. */
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
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

typedef struct {
  int (*function)(double t, const double y[], double dydt[], void *params);
  size_t dimension;
  void *params;
} ode_system;
struct driver;
/* A step type's set_driver, reached through a function pointer, keeps the driver's address
   in the stepper's state (GSL's multistep and implicit steppers), or does nothing. */
typedef struct { const struct driver *driver; double safety; } step_state;
typedef struct { void (*set_driver)(void *state, const struct driver *d); } step_type;
typedef struct { const step_type *type; void *state; size_t dim; double *k1, *k2, *tmp; }
    stepper;
typedef struct { size_t dim; double *y0; unsigned long count; const struct driver *driver; }
    evolve;
typedef struct driver {
  const ode_system *sys;
  stepper *s;
  evolve *e;
  double h;
  unsigned long n, nmax;
} driver;

struct ctx { const double *data; const double *p; };

static int rhs(double t, const double y[], double f[], void *params) {
  const struct ctx *c = params;
  f[0] = y[1];
  f[1] = -c->p[0] * y[0] - c->p[1] * y[1] + c->data[0] * sin(c->data[1] * t) + c->p[2];
  return 0;
}

static void keep_driver(void *state, const struct driver *d) {
  ((step_state *)state)->driver = d;
}
static void no_driver(void *state, const struct driver *d) { (void)state, (void)d; }
static const step_type kept = {keep_driver}, unkept = {no_driver};
const step_type *step_types[2] = {&unkept, &kept};

__attribute__((noinline)) static stepper *stepper_alloc(size_t dim) {
  stepper *s = malloc(sizeof *s);
  if (!s) return NULL;
  s->type = step_types[1];
  s->state = calloc(1, sizeof(step_state));
  ((step_state *)s->state)->safety = 1.0;
  s->dim = dim;
  s->k1 = malloc(dim * sizeof(double));
  s->k2 = malloc(dim * sizeof(double));
  s->tmp = malloc(dim * sizeof(double));
  return s;
}
__attribute__((noinline)) static evolve *evolve_alloc(size_t dim) {
  evolve *e = malloc(sizeof *e);
  if (!e) return NULL;
  e->dim = dim;
  e->y0 = malloc(dim * sizeof(double));
  e->count = 0;
  e->driver = NULL;
  return e;
}
__attribute__((noinline)) static void driver_free(driver *d) {
  if (d->s) { free(d->s->state); free(d->s->k1); free(d->s->k2); free(d->s->tmp); free(d->s); }
  if (d->e) { free(d->e->y0); free(d->e); }
  free(d);
}
__attribute__((noinline)) static driver *driver_alloc(const ode_system *sys, double h) {
  if (sys == NULL) return NULL;
  driver *d = calloc(1, sizeof *d);
  if (d == NULL) return NULL;
  d->sys = sys;
  d->s = stepper_alloc(sys->dimension);
  d->e = evolve_alloc(sys->dimension);
  if (d->s == NULL || d->e == NULL || !(h > 0)) {
    driver_free(d);
    return NULL;
  }
  d->h = h;
  return d;
}
static inline __attribute__((always_inline)) void evolve_set_driver(evolve *e,
                                                                    const driver *d) {
  e->driver = d;
}
__attribute__((noinline)) driver *driver_new(const ode_system *sys, double h) {
  driver *d = driver_alloc(sys, h);
  if (d) {
    evolve_set_driver(d->e, d);
    d->s->type->set_driver(d->s->state, d);
  }
  return d;
}

/* One midpoint step; the evolve object counts steps and copies the state it started from. */
__attribute__((noinline)) static int evolve_step(evolve *e, stepper *s, const ode_system *sys,
                                                 double *t, double h, double y[]) {
  size_t n = e->dim;
  const step_state *st = s->state;     /* the step size read back through the driver */
  if (st->driver) h = st->driver->h * st->safety;
  for (size_t i = 0; i < n; i++) e->y0[i] = y[i];
  sys->function(*t, y, s->k1, sys->params);
  for (size_t i = 0; i < n; i++) s->tmp[i] = y[i] + 0.5 * h * s->k1[i];
  sys->function(*t + 0.5 * h, s->tmp, s->k2, sys->params);
  for (size_t i = 0; i < n; i++) y[i] = e->y0[i] + h * s->k2[i];
  *t += h;
  e->count++;
  return 0;
}
__attribute__((noinline)) static int driver_apply(driver *d, double *t, unsigned long steps,
                                                  double y[]) {
  for (unsigned long i = 0; i < steps; i++) {
    if (evolve_step(d->e, d->s, d->sys, t, d->h, y)) return 1;
    d->n++;
  }
  return 0;
}

double loss(const double *data, const double *p) {
  struct ctx c = {data, p};
  ode_system sys = {rhs, 2, &c};
  driver *d = driver_new(&sys, 0.01);
  double t = 0.0, y[2] = {1.0, 0.0};
  driver_apply(d, &t, 20, y);
  driver_free(d);
  return y[0] * y[0] + 0.5 * y[1];
}

int main(void) {
  double data[2] = {0.7, 3.0}, p[3] = {2.0, 0.3, 0.1}, dp[3] = {0}, dp2[3] = {0};
  double ddata[2] = {0};
  __enzyme_autodiff((void *)loss, enzyme_const, data, enzyme_dup, p, dp);
  __enzyme_autodiff((void *)loss, enzyme_dup, data, ddata, enzyme_dup, p, dp2);
  for (int i = 0; i < 3; i++) {
    double h = 1e-6, s = p[i];
    p[i] = s + h;
    double a = loss(data, p);
    p[i] = s - h;
    double b = loss(data, p);
    p[i] = s;
    char name[32];
    snprintf(name, sizeof name, "dloss/dp%d", i);
    check(name, dp[i], (a - b) / (2 * h));
    snprintf(name, sizeof name, "dloss/dp%d_dup", i);
    check(name, dp[i], dp2[i]);
  }
  double dir[3] = {0.3, -1.1, 0.7};
  double tangent = __enzyme_fwddiff((void *)loss, enzyme_const, data, enzyme_dup, p, dir);
  check("forward_vs_reverse", tangent, dp[0] * dir[0] + dp[1] * dir[1] + dp[2] * dir[2]);
  return failed;
}
