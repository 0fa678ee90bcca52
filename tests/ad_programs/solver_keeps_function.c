/* A minimizer in the style of GSL's multimin: the user's function record (a function pointer,
   a size and `void *params`) is handed to the solver's `set`, kept out of line, which keeps
   its address in the solver it is given (`s->f = f`, in a function `set` calls); `iterate`
   reads it back and calls the
   function through the solver type's function pointer. The params record holds constant data
   (passed enzyme_const) beside the active parameters (refused before: "a pointer to double
   data without a shadow ... is stored into memory that has one"). The gradient of the
   minimum found with respect to the parameters, against central differences and against
   the same gradient with the data passed enzyme_dup with a zeroed shadow; forward mode
   against reverse. */
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
  double (*f)(const double *x, void *params);
  size_t n;
  void *params;
} min_function;
typedef struct {
  void (*iterate)(void *state, const min_function *f, double *x, double *fval);
} solver_type;
typedef struct { double step; } compass_state;
typedef struct {
  const solver_type *type;
  const min_function *f;
  double *x;
  double fval;
  void *state;
} minimizer;

/* Compass search: try each coordinate +- step, keep an improvement, else halve the step. */
static void compass_iterate(void *vstate, const min_function *f, double *x, double *fval) {
  compass_state *st = vstate;
  int moved = 0;
  for (size_t i = 0; i < f->n && !moved; i++)
    for (int sgn = -1; sgn <= 1 && !moved; sgn += 2) {
      double old = x[i];
      x[i] = old + sgn * st->step;
      double v = f->f(x, f->params);
      if (v < *fval) { *fval = v; moved = 1; }
      else x[i] = old;
    }
  if (!moved) st->step *= 0.5;
}
static const solver_type compass = {compass_iterate};

__attribute__((noinline)) minimizer *minimizer_alloc(const solver_type *T, size_t n) {
  minimizer *s = malloc(sizeof *s);
  if (s == NULL) return NULL;
  s->x = malloc(n * sizeof(double));
  s->state = malloc(sizeof(compass_state));
  if (s->x == NULL || s->state == NULL) {
    free(s->x);
    free(s);
    return NULL;
  }
  s->type = T;
  s->f = NULL;
  return s;
}
__attribute__((noinline)) void minimizer_set_with_value(minimizer *s, const min_function *f,
                                                        double fval) {
  s->f = f;
  s->fval = fval;
}
/* keeps f in s through a function of its own (GSL's gsl_min_fminimizer_set) */
__attribute__((noinline)) void minimizer_set(minimizer *s, const min_function *f,
                                             const double *x0, double step) {
  for (size_t i = 0; i < f->n; i++) s->x[i] = x0[i];
  ((compass_state *)s->state)->step = step;
  minimizer_set_with_value(s, f, f->f(s->x, f->params));
}
__attribute__((noinline)) void minimizer_iterate(minimizer *s) {
  s->type->iterate(s->state, s->f, s->x, &s->fval);
}
__attribute__((noinline)) void minimizer_free(minimizer *s) {
  free(s->state);
  free(s->x);
  free(s);
}

struct ctx { const double *data; const double *p; };
static double objective(const double *x, void *params) {
  const struct ctx *c = params;
  double a = x[0] - c->p[0], b = x[1] - c->p[1];
  return c->data[0] * a * a + b * b + c->data[1] * sin(x[0] * c->p[2]);
}

double loss(const double *data, const double *p) {
  struct ctx c = {data, p};
  min_function F = {objective, 2, &c};
  double x0[2] = {0.25, 0.75};
  minimizer *s = minimizer_alloc(&compass, 2);
  minimizer_set(s, &F, x0, 0.125);
  for (int i = 0; i < 40; i++) minimizer_iterate(s);
  double v = s->fval;
  minimizer_free(s);
  return v;
}

int main(void) {
  double data[2] = {1.5, 0.2}, p[3] = {0.8, -0.3, 1.1}, dp[3] = {0}, dp2[3] = {0};
  double ddata[2] = {0};
  __enzyme_autodiff((void *)loss, enzyme_const, data, enzyme_dup, p, dp);
  __enzyme_autodiff((void *)loss, enzyme_dup, data, ddata, enzyme_dup, p, dp2);
  for (int i = 0; i < 3; i++) {
    double h = 1e-7, s = p[i];
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
