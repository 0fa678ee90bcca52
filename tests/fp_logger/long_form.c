/* Enzyme's FPOpt logger, long forms: enzymeLogError(res, err, opcodeName, calleeName, moduleName,
 * functionName, blockIdx, instIdx, numOperands, operands) in __enzyme_error_estimate and
 * enzymeLogGrad(res, grad, ...same...) in __enzyme_autodiff; enzymeLogValue is not defined, so
 * it is not called. A vector operation logs each lane. Built with -DLOGGER and without (RESULT lines compared by the test). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double __enzyme_error_estimate(void *, ...);
double __enzyme_autodiff(void *, ...);
int enzyme_dup, enzyme_const;
typedef double v2d __attribute__((vector_size(16)));

static int failed;
static void check(const char *name, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1.0 + fabs(want));
  printf("CHECK %s %.17g %.17g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}

double g(double x, double y) {
  double p = x * y;
  double q = exp(p);
  return q - y;
}

void pair(const v2d *a, const v2d *b, v2d *out) { *out = *a * *b; }   /* fmul <2 x double> */

#ifdef LOGGER
typedef struct {
  double res, val, ops[4];
  char op[16], callee[32], module[256], fn[32];
  unsigned block, inst, n;
} Rec;
static Rec recs[64];
static int nrec;
static void record(double res, double val, const char *op, const char *callee, const char *module,
                   const char *fn, unsigned block, unsigned inst, unsigned n, double *ops) {
  if (nrec == 64) abort();
  Rec *r = &recs[nrec++];
  r->res = res, r->val = val, r->block = block, r->inst = inst, r->n = n;
  snprintf(r->op, sizeof r->op, "%s", op);
  snprintf(r->callee, sizeof r->callee, "%s", callee);
  snprintf(r->module, sizeof r->module, "%s", module);
  snprintf(r->fn, sizeof r->fn, "%s", fn);
  for (unsigned i = 0; i < n && i < 4; i++) r->ops[i] = ops[i];
}
void enzymeLogError(double res, double err, const char *op, const char *callee, const char *module,
                    const char *fn, unsigned block, unsigned inst, unsigned n, double *ops) {
  record(res, err, op, callee, module, fn, block, inst, n, ops);
}
void enzymeLogGrad(double res, double grad, const char *op, const char *callee, const char *module,
                   const char *fn, unsigned block, unsigned inst, unsigned n, double *ops) {
  record(res, grad, op, callee, module, fn, block, inst, n, ops);
}
static const Rec *find(const char *op, double res) {
  for (int k = 0; k < nrec; k++)
    if (!strcmp(recs[k].op, op) && recs[k].res == res) return &recs[k];
  return NULL;
}
static int same_ops(const Rec *r, double u, double v) {   /* either order (commuted operands) */
  return r->n == 2 && ((r->ops[0] == u && r->ops[1] == v) || (r->ops[0] == v && r->ops[1] == u));
}
static void common(const char *what, const Rec *r, const char *fn) {
  char name[64];
  size_t n = strlen(r->module);
  snprintf(name, sizeof name, "%s_module", what);
  check(name, n >= 11 && !strcmp(r->module + n - 11, "long_form.c"), 1, 0);
  snprintf(name, sizeof name, "%s_function", what);
  check(name, !strcmp(r->fn, fn), 1, 0);
}
#endif

int main(void) {
  volatile double in[2] = {0.5, 1.75};   /* (no constant folding) */
  double x = in[0], y = in[1];
  double err = __enzyme_error_estimate((void *)g, x, 1e-12, y, 0.0);
  printf("RESULT err %a\n", err);
  v2d a = {1.5, -2.0}, b = {0.25, 3.0}, out, da = {0, 0}, db = {0, 0}, dout = {1.0, 2.0};
  __enzyme_autodiff((void *)pair, enzyme_dup, &a, &da, enzyme_dup, &b, &db, enzyme_dup, &out, &dout);
  printf("RESULT pair %a %a %a %a\n", da[0], da[1], db[0], db[1]);
  check("da0", da[0], 1.0 * b[0], 0);
  check("da1", da[1], 2.0 * b[1], 0);
  check("db0", db[0], 1.0 * a[0], 0);
  check("db1", db[1], 2.0 * a[1], 0);
#ifdef LOGGER
  double p = x * y, q = exp(p), r = q - y;
  nrec = 0;
  double e2 = __enzyme_error_estimate((void *)g, x, 1e-12, y, 0.0);
  check("error_calls", nrec, 3, 0);
  const Rec *rp = find("fmul", p), *rq = find("call", q), *rr = find("fsub", r);
  check("found", rp && rq && rr, 1, 0);
  if (rp && rq && rr) {
    check("fmul_ops", same_ops(rp, x, y), 1, 0);
    check("fmul_callee", rp->callee[0] == 0, 1, 0);
    check("exp_callee", strstr(rq->callee, "exp") != NULL, 1, 0);
    check("exp_ops", rq->n == 1 && rq->ops[0] == p, 1, 0);
    check("fsub_ops", rr->n == 2 && rr->ops[0] == q && rr->ops[1] == y, 1, 0);
    check("fsub_err", rr->val, e2, 0);
    check("fmul_err", rp->val, fmax(nextafter(p, INFINITY) - p, fabs(y * (1e-12 * x / p))), 1e-9);
    common("err", rr, "g");
  }
  /* reverse mode: adjoints d(q - y)/d(q - y) = 1, d/dq = 1, d/dp = exp(p) = q */
  nrec = 0;
  double dxy = __enzyme_autodiff((void *)g, x, enzyme_const, y);
  check("grad_calls", nrec, 3, 0);
  rp = find("fmul", p), rq = find("call", q), rr = find("fsub", r);
  check("grad_found", rp && rq && rr, 1, 0);
  if (rp && rq && rr) {
    check("fsub_grad", rr->val, 1.0, 0);
    check("grad_fsub_res", rr->res, r, 0);
    check("exp_grad", rq->val, 1.0, 0);
    check("fmul_grad", rp->val, q, 1e-15);
    check("grad_fmul_ops", same_ops(rp, x, y), 1, 0);
    check("grad_exp_ops", rq->n == 1 && rq->ops[0] == p, 1, 0);
    common("grad", rp, "g");
  }
  check("dx", dxy, y * q, 1e-15);
  /* each lane of pair's products: adjoint dout[k], result a[k]*b[k] */
  nrec = 0;
  v2d da2 = {0, 0}, db2 = {0, 0}, dout2 = {1.0, 2.0};
  __enzyme_autodiff((void *)pair, enzyme_dup, &a, &da2, enzyme_dup, &b, &db2, enzyme_dup, &out,
                    &dout2);
  check("pair_calls", nrec, 2, 0);
  for (int k = 0; k < 2; k++) {
    const Rec *m = find("fmul", a[k] * b[k]);
    check("pair_found", m != NULL, 1, 0);
    if (m) {
      check("pair_grad", m->val, k ? 2.0 : 1.0, 0);
      check("pair_ops", same_ops(m, a[k], b[k]), 1, 0);
      common("pair", m, "pair");
    }
  }
#endif
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
