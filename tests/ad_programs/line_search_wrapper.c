/* A gradient minimizer in the style of GSL's vector_bfgs2: the user's function record (f, its
   gradient, a size and `void *params`) is kept in the minimizer (`s->fdf = fdf`), and the
   minimizer type's `set`, called through a function pointer with the record read back from
   the minimizer (`s->type->set(s->state, s->fdf, ...)`), keeps it in a line-search wrapper
   inside the type's state. The wrapper is itself a function record whose `params` points to
   the wrapper (`w->line.params = &w->...`: a pointer into the state, kept in the state), and
   `iterate` evaluates the user's function through it. The params record holds constant data
   (passed enzyme_const) beside the active parameters (refused before: "a pointer to double
   data without a shadow ... is stored into memory that has one"). The gradient of the value
   reached with respect to the parameters, against central differences and against the same
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

enum { N = 2 };
typedef struct {
  double (*f)(const double *x, void *params);
  void (*df)(const double *x, void *params, double *g);
  void *params;
} fdf_function;
typedef struct {                 /* a function of the step length along a direction */
  double (*f)(double alpha, void *params);
  void *params;
} line_function;
typedef struct {
  line_function line;            /* line.params points to this wrapper */
  const fdf_function *fdf;
  const double *x, *dir;
  double xa[N];
} line_wrapper;
typedef struct {
  double step;
  line_wrapper w;
  double dir[N];
} descent_state;
typedef struct {
  void (*set)(void *state, const fdf_function *fdf, const double *x, double *f, double *g,
              double step);
  void (*iterate)(void *state, const fdf_function *fdf, double *x, double *f, double *g);
} minimizer_type;
typedef struct {
  const minimizer_type *type;
  const fdf_function *fdf;
  double x[N], g[N];
  double f;
  void *state;
} minimizer;

static double along(double alpha, void *params) {
  line_wrapper *w = params;
  for (int i = 0; i < N; i++) w->xa[i] = w->x[i] + alpha * w->dir[i];
  return w->fdf->f(w->xa, w->fdf->params);
}
__attribute__((noinline)) static void wrap(line_wrapper *w, const fdf_function *fdf,
                                           const double *x, const double *dir) {
  w->line.f = along;
  w->line.params = w;
  w->fdf = fdf;
  w->x = x;
  w->dir = dir;
}
static void descent_set(void *vstate, const fdf_function *fdf, const double *x, double *f,
                        double *g, double step) {
  descent_state *st = vstate;
  st->step = step;
  *f = fdf->f(x, fdf->params);
  fdf->df(x, fdf->params, g);
  for (int i = 0; i < N; i++) st->dir[i] = -g[i];
  wrap(&st->w, fdf, x, st->dir);
}
/* Steepest descent with a backtracking line search through the wrapper. */
static void descent_iterate(void *vstate, const fdf_function *fdf, double *x, double *f,
                            double *g) {
  descent_state *st = vstate;
  const line_function *line = &st->w.line;
  double alpha = st->step, fa = line->f(alpha, line->params);
  for (int k = 0; k < 20 && fa >= *f; k++) {
    alpha *= 0.5;
    fa = line->f(alpha, line->params);
  }
  if (fa < *f) {
    for (int i = 0; i < N; i++) x[i] += alpha * st->dir[i];
    *f = fa;
    st->step = 2 * alpha;
  }
  fdf->df(x, fdf->params, g);
  for (int i = 0; i < N; i++) st->dir[i] = -g[i];
}
static const minimizer_type descent = {descent_set, descent_iterate};

__attribute__((noinline)) minimizer *minimizer_alloc(const minimizer_type *T) {
  minimizer *s = malloc(sizeof *s);
  if (s == NULL) return NULL;
  s->state = malloc(sizeof(descent_state));
  if (s->state == NULL) {
    free(s);
    return NULL;
  }
  s->type = T;
  s->fdf = NULL;
  return s;
}
__attribute__((noinline)) void start_at(minimizer *s, const double *x0) {
  for (int i = 0; i < N; i++) s->x[i] = x0[i];
}
__attribute__((noinline)) void minimizer_set(minimizer *s, const fdf_function *fdf,
                                             const double *x0, double step) {
  s->fdf = fdf;
  start_at(s, x0);
  s->type->set(s->state, s->fdf, s->x, &s->f, s->g, step);
}
__attribute__((noinline)) void minimizer_iterate(minimizer *s) {
  s->type->iterate(s->state, s->fdf, s->x, &s->f, s->g);
}
__attribute__((noinline)) void minimizer_free(minimizer *s) {
  free(s->state);
  free(s);
}

struct ctx { const double *data; const double *p; };
static double objective(const double *x, void *params) {
  const struct ctx *c = params;
  double a = x[0] - c->p[0], b = x[1] - c->p[1];
  return c->data[0] * a * a + b * b + c->data[1] * a * b * c->p[2];
}
static void gradient(const double *x, void *params, double *g) {
  const struct ctx *c = params;
  double a = x[0] - c->p[0], b = x[1] - c->p[1];
  g[0] = 2 * c->data[0] * a + c->data[1] * b * c->p[2];
  g[1] = 2 * b + c->data[1] * a * c->p[2];
}

double loss(const double *data, const double *p) {
  struct ctx c = {data, p};
  fdf_function F = {objective, gradient, &c};
  double x0[N] = {0.25, 0.75};
  minimizer *s = minimizer_alloc(&descent);
  minimizer_set(s, &F, x0, 0.3);
  for (int i = 0; i < 6; i++) minimizer_iterate(s);
  double v = s->f + s->x[0] * s->x[1];
  minimizer_free(s);
  return v;
}

int main(void) {
  double data[2] = {1.5, 0.4}, p[3] = {0.8, -0.3, 1.1}, dp[3] = {0}, dp2[3] = {0};
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
