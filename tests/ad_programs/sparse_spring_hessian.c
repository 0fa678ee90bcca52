/* Sparse Hessian of a spring-chain energy through Enzyme's pseudo-dense pointers
   (__enzyme_todense): forward mode over the reverse-mode gradient, with the input tangent read
   from an identity column and the gradient's tangent written as (row, col, value) triplets by
   an enzyme_sparse_accumulate function. Checked against the dense forward-over-reverse Hessian
   and central finite differences of the gradient. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const, enzyme_dupnoneed;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
double *__enzyme_todense(void *, void *, ...);
double *__enzyme_post_sparse_todense(void *, void *, ...);

enum { N = 7, CAP = 256 };

/* springs between neighbours (with a fixed transverse offset, so they are nonlinear) and a
   quartic pinning term */
double energy(const double *x, int64_t n) {
  double e = 0;
  for (int64_t i = 0; i + 1 < n; i++) {
    double d = x[i + 1] - x[i];
    double s = sqrt(d * d + 1.0) - 0.8;
    e += 1.5 * s * s;
  }
  for (int64_t i = 0; i < n; i++) e += 0.1 * x[i] * x[i] * x[i] * x[i];
  return e;
}

void gradient(const double *x, double *g, int64_t n) {
  __enzyme_autodiff((void *)energy, enzyme_dup, x, g, enzyme_const, n);
}

struct coo { int count; int64_t row[CAP], col[CAP]; double val[CAP]; };

/* column j of the identity, as a pseudo-dense input tangent */
static double ident_load(int64_t offset, int64_t j) { return offset / (int64_t)sizeof(double) == j; }
static void ident_store(double v, int64_t offset, int64_t j) { (void)v; (void)offset; (void)j; }

__attribute__((enzyme_sparse_accumulate))
static void push_entry(int64_t row, int64_t col, double v, struct coo *h) {
  if (h->count < CAP) {
    h->row[h->count] = row;
    h->col[h->count] = col;
    h->val[h->count] = v;
  }
  h->count++;
}
/* the gradient's tangent: every store is an increment (loads see 0), recorded as a triplet */
static double zero_load(int64_t offset, int64_t j, struct coo *h) { (void)offset; (void)j; (void)h; return 0; }
static void sparse_store(double v, int64_t offset, int64_t j, struct coo *h) {
  if (v != 0) push_entry(offset / (int64_t)sizeof(double), j, v, h);
}
/* read-only view of x through load/store functions (post_sparse_todense) */
static double x_load(int64_t offset, const double *x) { return x[offset / (int64_t)sizeof(double)]; }
static void x_store(double v, int64_t offset, const double *x) { (void)v; (void)offset; (void)x; }

__attribute__((noinline)) void sparse_hessian(const double *x, struct coo *h) {
  double g[N];
  for (int64_t j = 0; j < N; j++) {
    double *dx = __enzyme_todense((void *)ident_load, (void *)ident_store, j);
    double *dg = __enzyme_todense((void *)zero_load, (void *)sparse_store, j, h);
    __enzyme_fwddiff((void *)gradient, enzyme_dup, x, dx, enzyme_dup, g, dg, enzyme_const,
                     (int64_t)N);
  }
}
/* the same, reading x itself through a pseudo-dense view */
__attribute__((noinline)) void sparse_hessian_view(const double *x, struct coo *h) {
  double g[N];
  const double *in = __enzyme_post_sparse_todense((void *)x_load, (void *)x_store, x);
  for (int64_t j = 0; j < N; j++) {
    double *dx = __enzyme_todense((void *)ident_load, (void *)ident_store, j);
    double *dg = __enzyme_todense((void *)zero_load, (void *)sparse_store, j, h);
    __enzyme_fwddiff((void *)gradient, enzyme_dup, in, dx, enzyme_dup, g, dg, enzyme_const,
                     (int64_t)N);
  }
}

/* a pseudo-dense pointer made inside a differentiated function, from arguments without
   derivatives: its values (weights 1 + k*j) are constants of the derivative */
static double weight_load(int64_t offset, int64_t j) { return 1.0 + (double)(offset / 8 * j); }
static void weight_store(double v, int64_t offset, int64_t j) { (void)v; (void)offset; (void)j; }
double weighted_squares(const double *x, int64_t j) {
  const double *w = __enzyme_todense((void *)weight_load, (void *)weight_store, j);
  double s = 0;
  for (int i = 0; i < 3; i++) s += w[i] * x[i] * x[i];
  return s;
}

int main(void) {
  double x[N] = {0.3, -0.7, 1.1, 0.4, -0.2, 0.9, 1.6};
  double H[N][N], D[N][N], gp[N], gm[N], g[N];
  /* dense reference: forward over reverse, one column at a time */
  for (int j = 0; j < N; j++) {
    double e[N] = {0}, dg[N] = {0};
    e[j] = 1;
    memset(g, 0, sizeof g);
    __enzyme_fwddiff((void *)gradient, enzyme_dup, x, e, enzyme_dup, g, dg, enzyme_const,
                     (int64_t)N);
    for (int i = 0; i < N; i++) D[i][j] = dg[i];
  }
  for (int view = 0; view < 2; view++) {
    static struct coo h;
    h.count = 0;
    if (view) sparse_hessian_view(x, &h); else sparse_hessian(x, &h);
    memset(H, 0, sizeof H);
    int far = 0;
    for (int k = 0; k < h.count && k < CAP; k++) {
      H[h.row[k]][h.col[k]] += h.val[k];
      far += h.row[k] - h.col[k] > 1 || h.col[k] - h.row[k] > 1;
    }
    char name[64];
    snprintf(name, sizeof name, "view%d_entries_off_band", view);
    check(name, far, 0);
    snprintf(name, sizeof name, "view%d_sparse_not_dense", view);
    check(name, h.count <= 3 * N * 2, 1);
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) {
        snprintf(name, sizeof name, "view%d_H[%d][%d]", view, i, j);
        check(name, H[i][j], D[i][j]);
      }
  }
  /* finite differences of the reverse-mode gradient */
  const double step = 1e-5;
  for (int j = 0; j < N; j++) {
    double xp[N], xm[N];
    memcpy(xp, x, sizeof x);
    memcpy(xm, x, sizeof x);
    xp[j] += step;
    xm[j] -= step;
    memset(gp, 0, sizeof gp);
    memset(gm, 0, sizeof gm);
    gradient(xp, gp, N);
    gradient(xm, gm, N);
    for (int i = 0; i < N; i++) {
      char name[64];
      snprintf(name, sizeof name, "fd_H[%d][%d]", i, j);
      check(name, D[i][j], (gp[i] - gm[i]) / (2 * step));
    }
  }
  /* forward vs reverse on the energy (dot-product test) */
  double v[N], gr[N] = {0}, dot = 0;
  for (int i = 0; i < N; i++) v[i] = sin(1.3 + 7.1 * i);
  gradient(x, gr, N);
  for (int i = 0; i < N; i++) dot += gr[i] * v[i];
  check("fwd_vs_rev", __enzyme_fwddiff((void *)energy, enzyme_dup, x, v, enzyme_const, (int64_t)N),
        dot);
  double y[3] = {1.0, -2.0, 0.5}, dy[3] = {0}, ones[3] = {1, 1, 1};
  __enzyme_autodiff((void *)weighted_squares, enzyme_dup, y, dy, enzyme_const, (int64_t)2);
  for (int i = 0; i < 3; i++) {
    char name[64];
    snprintf(name, sizeof name, "inner_todense_d[%d]", i);
    check(name, dy[i], 2 * (1.0 + 2 * i) * y[i]);
  }
  check("inner_todense_fwd",
        __enzyme_fwddiff((void *)weighted_squares, enzyme_dup, y, ones, enzyme_const, (int64_t)2),
        dy[0] + dy[1] + dy[2]);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
