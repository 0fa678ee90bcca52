/* A least-squares fit in the style of GSL's multifit_nlinear: the workspace allocator copies
   the caller's parameter record into the block it returns (memcpy) and frees the block
   through a function of its own on a failure path; init keeps the user's function record in
   the workspace (`w->fdf = fdf`); each iteration hands the record to the method's step
   through a local record and a function pointer. The user's record has an optional
   second-derivative callback left NULL, of a type that another function of the library
   (the predicted reduction, which writes a double through its third argument) also has,
   so that function counts as a possible target receiving the user's params. The params
   record holds constant data (passed enzyme_const) beside the active parameters (refused
   before: "a pointer to double data without a shadow ... is stored into memory that has
   one"). The gradient of the fitted parameters' sum with respect to the parameters, against
   central differences and the enzyme_dup workaround; forward mode against reverse. */
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

enum { N = 8, P = 2 };
typedef struct {
  int (*f)(const double *x, void *params, double *r);
  int (*df)(const double *x, void *params, double *J);
  int (*fvv)(const double *x, const double *v, void *params, double *out);   /* optional */
  void *params;
} fit_function;
typedef struct { double factor; int max_halvings; } fit_parameters;
typedef struct {               /* what a step sees (a local record of the iteration) */
  const double *x, *r, *J;
  const fit_function *fdf;
  const fit_parameters *params;
} step_input;
typedef struct {
  int (*step)(const step_input *in, double *dx, double *pred, void *state);
  int (*predicted)(const void *in, const double *dx, double *pred, void *state);
} method_type;
typedef struct {
  const method_type *type;
  const fit_function *fdf;
  double x[P], r[N], J[N * P], dx[P];
  fit_parameters params;
  void *state;
} workspace;

/* Gauss-Newton: solve (J^T J) dx = -J^T r */
static int gn_step(const step_input *in, double *dx, double *pred, void *state) {
  double a = 0, b = 0, c = 0, g0 = 0, g1 = 0;
  for (int i = 0; i < N; i++) {
    const double *j = in->J + i * P;
    a += j[0] * j[0]; b += j[0] * j[1]; c += j[1] * j[1];
    g0 += j[0] * in->r[i]; g1 += j[1] * in->r[i];
  }
  double det = a * c - b * b;
  dx[0] = -(c * g0 - b * g1) / det * in->params->factor;
  dx[1] = -(a * g1 - b * g0) / det * in->params->factor;
  if (in->fdf->fvv) {          /* never taken here: the user passes no fvv */
    double v[P] = {dx[0], dx[1]}, out[N];
    in->fdf->fvv(in->x, v, in->fdf->params, out);
  }
  *pred = g0 * dx[0] + g1 * dx[1];
  (void)state;
  return 0;
}
static int gn_predicted(const void *vin, const double *dx, double *pred, void *state) {
  const step_input *in = vin;
  double s = 0;
  for (int i = 0; i < N; i++) s += in->r[i] * (in->J[i * P] * dx[0] + in->J[i * P + 1] * dx[1]);
  *pred = -s;
  (void)state;
  return 0;
}
static const method_type gauss_newton = {gn_step, gn_predicted};

__attribute__((noinline)) void workspace_free(workspace *w) {
  free(w->state);
  free(w);
}
__attribute__((noinline)) workspace *workspace_alloc(const method_type *T,
                                                     const fit_parameters *fp) {
  workspace *w = calloc(1, sizeof *w);
  if (w == NULL) return NULL;
  w->state = malloc(16);
  if (w->state == NULL) {
    workspace_free(w);
    return NULL;
  }
  w->type = T;
  memcpy(&w->params, fp, sizeof *fp);
  return w;
}
__attribute__((noinline)) void workspace_init(const double *x0, const fit_function *fdf,
                                              workspace *w) {
  w->fdf = fdf;
  for (int k = 0; k < P; k++) w->x[k] = x0[k];
  fdf->f(w->x, fdf->params, w->r);
  fdf->df(w->x, fdf->params, w->J);
}
__attribute__((noinline)) void workspace_iterate(workspace *w) {
  step_input in = {w->x, w->r, w->J, w->fdf, &w->params};
  double pred, pred2;
  w->type->step(&in, w->dx, &pred, w->state);
  w->type->predicted(&in, w->dx, &pred2, w->state);
  for (int k = 0; k < P; k++) w->x[k] += w->dx[k];
  w->fdf->f(w->x, w->fdf->params, w->r);
  w->fdf->df(w->x, w->fdf->params, w->J);
}

struct ctx { const double *data; const double *p; };
static void observations(const struct ctx *c, double *t, double *y) {
  for (int i = 0; i < N; i++) {
    t[i] = 0.25 * i;
    y[i] = (2.0 + c->p[0]) * exp(-(0.5 + 0.3 * c->p[1]) * t[i]) + 0.05 * c->data[i % 4];
  }
}
static int residual(const double *x, void *params, double *r) {
  double t[N], y[N];
  observations(params, t, y);
  for (int i = 0; i < N; i++) r[i] = x[0] * exp(-x[1] * t[i]) - y[i];
  return 0;
}
static int jacobian(const double *x, void *params, double *J) {
  double t[N], y[N];
  observations(params, t, y);
  for (int i = 0; i < N; i++) {
    double e = exp(-x[1] * t[i]);
    J[i * P] = e;
    J[i * P + 1] = -t[i] * x[0] * e;
  }
  return 0;
}

double loss(const double *data, const double *p) {
  struct ctx c = {data, p};
  fit_function F = {residual, jacobian, NULL, &c};
  fit_parameters fp = {1.0, 4};
  double x0[P] = {1.5, 0.8};
  workspace *w = workspace_alloc(&gauss_newton, &fp);
  workspace_init(x0, &F, w);
  for (int k = 0; k < 6; k++) workspace_iterate(w);
  double v = w->x[0] + 2 * w->x[1];
  workspace_free(w);
  return v;
}

int main(void) {
  double data[4] = {0.5, 1.3, -0.2, 0.9}, p[2] = {0.3, 0.7}, dp[2] = {0}, dp2[2] = {0};
  double ddata[4] = {0};
  __enzyme_autodiff((void *)loss, enzyme_const, data, enzyme_dup, p, dp);
  __enzyme_autodiff((void *)loss, enzyme_dup, data, ddata, enzyme_dup, p, dp2);
  for (int i = 0; i < 2; i++) {
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
  double dir[2] = {0.3, -1.1};
  double tangent = __enzyme_fwddiff((void *)loss, enzyme_const, data, enzyme_dup, p, dir);
  check("forward_vs_reverse", tangent, dp[0] * dir[0] + dp[1] * dir[1]);
  return failed;
}
