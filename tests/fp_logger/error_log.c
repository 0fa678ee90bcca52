/* Enzyme's FPOpt logger, short forms (`const char *id`): enzymeLogValue and enzymeLogError in
 * __enzyme_error_estimate, enzymeLogValue in __enzyme_fwddiff. Built with -DLOGGER (callbacks
 * defined, every logged value checked against what this program computes itself) and without
 * (then only the RESULT lines are printed: the test compares them with the logged build's). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double __enzyme_error_estimate(void *, ...);
double __enzyme_fwddiff(void *, ...);

static int failed;
static void check(const char *name, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1.0 + fabs(want));
  printf("CHECK %s %.17g %.17g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}

/* a = x*y, b = sin(a), c = b/y, d = c + x: logged; e = exp(d) only reaches printf: not logged */
double f(double x, double y) {
  double a = x * y;
  double b = sin(a);
  double c = b / y;
  double d = c + x;
  double e = exp(d);
  printf("f: e = %g\n", e);
  return d;
}

/* one fmul and one fadd per iteration: logged once per execution */
double poly(double x, int n) {
  double s = 1.0;
  for (int k = 0; k < n; k++) {
    double m = s * x;          /* (two statements: no fused multiply-add) */
    s = m + 0.5;
  }
  return s;
}

#ifdef LOGGER
enum { MAX = 256 };
static struct { char id[64]; double res, ops[4]; unsigned n; double err; int nv, ne; } log_[MAX];
static int nlog, values, errors;
static int slot(const char *id) {
  for (int k = 0; k < nlog; k++)
    if (!strcmp(log_[k].id, id)) return k;
  if (nlog == MAX) abort();
  snprintf(log_[nlog].id, sizeof log_[nlog].id, "%s", id);
  return nlog++;
}
void enzymeLogValue(const char *id, double res, unsigned n, double *ops) {
  int k = slot(id);
  values++;
  log_[k].nv++;
  log_[k].res = res;
  log_[k].n = n;
  for (unsigned i = 0; i < n && i < 4; i++) log_[k].ops[i] = ops[i];
}
void enzymeLogError(const char *id, double err) {
  int k = slot(id);
  errors++;
  log_[k].ne++;
  log_[k].err = err;
}
static void reset(void) {
  memset(log_, 0, sizeof log_);
  nlog = values = errors = 0;
}

/* the id logged with result r: it names f ("f:block:inst") and its operands are ops (any order) */
static int find(const char *fn, double r, int n, const double *ops) {
  for (int k = 0; k < nlog; k++) {
    if (log_[k].res != r || (int)log_[k].n != n) continue;
    int b, i, used = 0, match = 1;
    char name[64];
    if (sscanf(log_[k].id, "%63[^:]:%d:%d", name, &b, &i) != 3 || strcmp(name, fn)) continue;
    for (int j = 0; j < n; j++) {
      int hit = 0;
      for (int m = 0; m < n && !hit; m++)
        if (!(used >> m & 1) && log_[k].ops[m] == ops[j]) used |= 1 << m, hit = 1;
      match &= hit;
    }
    if (match) return k;
  }
  return -1;
}
static double ulp(double v) { return nextafter(fabs(v), INFINITY) - fabs(v); }
#endif

int main(void) {
  volatile double in[4] = {0.75, 1.25, 1e-10, 2e-12};   /* (no constant folding) */
  double x = in[0], y = in[1], ex = in[2], ey = in[3];
  double err = __enzyme_error_estimate((void *)f, x, ex, y, ey);
  printf("RESULT err %a\n", err);
  double t = __enzyme_fwddiff((void *)f, x, 1.0, y, 0.0);
  printf("RESULT tangent %a\n", t);
  double perr = __enzyme_error_estimate((void *)poly, 1.5, 1e-9, 5);
  printf("RESULT poly %a\n", perr);
#ifdef LOGGER
  double a = x * y, b = sin(a), c = b / y, d = c + x;
  /* error estimate: 4 values and 4 errors, ids of f, results and operands as computed here */
  reset();
  __enzyme_error_estimate((void *)f, x, ex, y, ey);
  check("values", values, 4, 0);
  check("errors", errors, 4, 0);
  int ka = find("f", a, 2, (double[]){x, y}), kb = find("f", b, 1, (double[]){a});
  int kc = find("f", c, 2, (double[]){b, y}), kd = find("f", d, 2, (double[]){c, x});
  check("found_a", ka >= 0, 1, 0);
  check("found_b", kb >= 0, 1, 0);
  check("found_c", kc >= 0, 1, 0);
  check("found_d", kd >= 0, 1, 0);
  if (ka >= 0 && kb >= 0 && kc >= 0 && kd >= 0) {
    /* err(r) = max(ulp(r), sum |df/dx_i * err_i * x_i / r|), from the logged errors upwards */
    double ea = fmax(ulp(a), fabs(y * (ex * x / a)) + fabs(x * (ey * y / a)));
    double eb = fmax(ulp(b), fabs(cos(a) * (ea * a / b)));
    double ec = fmax(ulp(c), fabs((eb * b / c) / y) + fabs(-b / (y * y) * (ey * y / c)));
    double ed = fmax(ulp(d), fabs(ec * c / d) + fabs(ex * x / d));
    check("err_a", log_[ka].err, ea, 1e-9);
    check("err_b", log_[kb].err, eb, 1e-9);
    check("err_c", log_[kc].err, ec, 1e-9);
    check("err_d", log_[kd].err, ed, 1e-9);
    check("err_d_is_result", log_[kd].err, err, 0);   /* the estimate is the last one logged */
    check("distinct_ids", ka != kb && ka != kc && ka != kd && kb != kc && kb != kd && kc != kd, 1, 0);
  }
  /* forward mode logs the values (no errors) */
  reset();
  __enzyme_fwddiff((void *)f, x, 1.0, y, 0.0);
  check("fwd_values", values, 4, 0);
  check("fwd_errors", errors, 0, 0);
  check("fwd_found_d", find("f", d, 2, (double[]){c, x}) >= 0, 1, 0);
  /* a loop: each operation logged at every iteration */
  reset();
  double pe = __enzyme_error_estimate((void *)poly, 1.5, 1e-9, 5);
  check("poly_values", values, 10, 0);
  check("poly_errors", errors, 10, 0);
  check("poly_ids", nlog, 2, 0);
  for (int k = 0; k < nlog; k++) {
    check("poly_id_values", log_[k].nv, 5, 0);
    check("poly_id_errors", log_[k].ne, 5, 0);
  }
  double s = 1.0;
  for (int k = 0; k < 5; k++) {
    double m = s * 1.5;
    s = m + 0.5;
  }
  int last = -1;
  for (int k = 0; k < nlog; k++)
    if (log_[k].res == s) last = k;
  check("poly_last_value", last >= 0, 1, 0);
  if (last >= 0) check("poly_last_error", log_[last].err, pe, 0);
#endif
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
