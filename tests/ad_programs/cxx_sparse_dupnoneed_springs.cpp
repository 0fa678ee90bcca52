// Sparse Hessians the way Enzyme's Sparse examples (ring springs, sqrt springs) write them:
// forward mode over the reverse-mode gradient, the gradient's primal passed as
// enzyme_dupnoneed with a pointer that is not memory ((double*)0x1), its tangent a
// pseudo-dense pointer whose stores record (row, col, value) triplets in a std::vector. The
// ring reads its input through a pseudo-dense view that wraps indices modulo N.
// Checked: sparse Hessian == dense forward-over-reverse Hessian == central differences of the
// gradient; a dense Hessian-vector product with (double*)0x1 as the gradient's primal; a real
// primal buffer full of NaN given as enzyme_dupnoneed changes nothing; forward vs reverse.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <vector>

static int failed;
static void check(const char *name, double got, double want) {
  bool ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}

struct entry {
  size_t row, col;
  double val;
  entry(size_t r, size_t c, double v) : row(r), col(c), val(v) {}
};

extern int enzyme_dup, enzyme_dupnoneed, enzyme_const;
extern void __enzyme_autodiff(void *, ...);
extern void __enzyme_fwddiff(void *, ...);
extern double __enzyme_fwddiff_d(void *, ...) __asm__("__enzyme_fwddiff");
extern double *__enzyme_todense(void *, ...) noexcept;

enum { N = 6 };

// a closed ring of springs of rest length 1 (x[N] is x[0] through the wrapping view)
static double ring(size_t n, const double *x) {
  double e = 0;
  for (size_t i = 0; i < n; i++) {
    double d = x[i + 1] - x[i];
    double s = sqrt(d * d + 0.25) - 1;
    e += s * s;
  }
  return e;
}
// an open chain whose springs' energy is (sqrt(stretch) + 1)^2 (stretches stay positive)
static double chain(size_t n, const double *x) {
  double e = 0;
  for (size_t i = 0; i + 1 < n; i++) {
    double d = x[i + 1] - x[i];
    e += (sqrt(d) + 1) * (sqrt(d) + 1);
  }
  return e;
}

static void ring_grad(size_t n, const double *x, double *g) {
  __enzyme_autodiff((void *)ring, enzyme_const, n, enzyme_dup, x, g);
}
static void chain_grad(size_t n, const double *x, double *g) {
  __enzyme_autodiff((void *)chain, enzyme_const, n, enzyme_dup, x, g);
}

// input tangent: column j of the identity (offsets are bytes; offset n*8 is x[0] again)
static double unit_load(int64_t off, size_t j, size_t n) {
  size_t k = (size_t)(off / (int64_t)sizeof(double)) % n;
  return k == j ? 1.0 : 0.0;
}
static void unit_store(double, int64_t, size_t, size_t) {}

__attribute__((enzyme_sparse_accumulate))
void record(size_t row, size_t col, double v, std::vector<entry> &out) { out.emplace_back(row, col, v); }
// gradient tangent: every store is an increment; loads see 0
static void triplet_store(double v, int64_t off, size_t j, size_t n, std::vector<entry> &out) {
  if (v == 0.0) return;
  record((size_t)(off / (int64_t)sizeof(double)) % n, j, v, out);
}
static double triplet_load(int64_t, size_t, size_t, std::vector<entry> &) { return 0.0; }

// the ring's input: x[k % n], read only
static double wrap_load(int64_t off, const double *x, size_t n) {
  return x[(size_t)(off / (int64_t)sizeof(double)) % n];
}
static void wrap_store(double, int64_t, const double *, size_t) {}

__attribute__((noinline)) std::vector<entry> ring_hessian(size_t n, const double *x) {
  std::vector<entry> out;
  const double *in = __enzyme_todense((void *)wrap_load, (void *)wrap_store, x, n);
  for (size_t j = 0; j < n; j++) {
    double *dx = __enzyme_todense((void *)unit_load, (void *)unit_store, j, n);
    double *dg = __enzyme_todense((void *)triplet_load, (void *)triplet_store, j, n, &out);
    __enzyme_fwddiff((void *)ring_grad, enzyme_const, n, enzyme_dup, in, dx,
                     enzyme_dupnoneed, (double *)0x1, dg);
  }
  return out;
}
__attribute__((noinline)) std::vector<entry> chain_hessian(size_t n, const double *x) {
  std::vector<entry> out;
  for (size_t j = 0; j < n; j++) {
    double *dx = __enzyme_todense((void *)unit_load, (void *)unit_store, j, n);
    double *dg = __enzyme_todense((void *)triplet_load, (void *)triplet_store, j, n, &out);
    __enzyme_fwddiff((void *)chain_grad, enzyme_const, n, enzyme_dup, x, dx,
                     enzyme_dupnoneed, (double *)0x1, dg);
  }
  return out;
}

// functions that read back what they wrote through the enzyme_dupnoneed argument: its writes
// cannot be dropped then (the memory is real here), and the tangents must still be right
__attribute__((noinline)) static void prod_step(double *out, int i, double x) {
  out[i] = out[i - 1] * x;
}
static void prefix_product(double *out, const double *x, int n) {
  out[0] = x[0];
  for (int i = 1; i < n; i++) prod_step(out, i, x[i]);
}
static void scale(double *out, const double *x, int n) {
  for (int i = 0; i < n; i++) out[i] *= x[i];
}
// the pointer escapes into a global, through which a callee reads what was written
static double *kept;
__attribute__((noinline)) static void keep(double *p) { kept = p; }
__attribute__((noinline)) static double kept_square() { return kept[0] * kept[0]; }
static void through_global(double *out, const double *x) {
  keep(out);
  out[0] = 3 * x[0];
  out[1] = kept_square();
}

typedef void (*grad_fn)(size_t, const double *, double *);

// the ring's x[N] must read x[0]: pass a copy with one extra element for the dense paths
static void ring_grad_dense(size_t n, const double *x, double *g) {
  double xx[N + 1];
  memcpy(xx, x, n * sizeof(double));
  xx[n] = x[0];
  double gg[N + 1] = {0};
  ring_grad(n, xx, gg);
  for (size_t i = 0; i < n; i++) g[i] += gg[i];
  g[0] += gg[n];
}

typedef double (*energy_fn)(size_t, const double *);
typedef std::vector<entry> (*hess_fn)(size_t, const double *);

// the functions are template arguments, so each marker call names a known function
template <grad_fn grad, energy_fn energy, hess_fn hess>
static void test(const char *tag, const double *x, bool wrap) {
  char name[96];
  double S[N][N] = {{0}}, D[N][N], FD[N][N];
  std::vector<entry> t = hess(N, x);
  for (auto &e : t) S[e.row][e.col] += e.val;
  int far = 0;
  for (auto &e : t) {
    size_t d = e.row > e.col ? e.row - e.col : e.col - e.row;
    far += d > 1 && !(wrap && d == N - 1);
  }
  snprintf(name, sizeof name, "%s_entries_off_pattern", tag);
  check(name, far, 0);
  // dense: forward over reverse with real memory, one column at a time; the ring's wrapped
  // coordinate is x[N] = x[0], so its tangent column is e_j with e[N] = e[0]
  double xx[N + 1];
  memcpy(xx, x, sizeof(double) * N);
  xx[N] = x[0];
  for (int j = 0; j < N; j++) {
    double e[N + 1] = {0}, g[N + 1] = {0}, dg[N + 1] = {0};
    e[j] = 1;
    e[N] = e[0];
    __enzyme_fwddiff((void *)grad, enzyme_const, (size_t)N, enzyme_dup, xx, e, enzyme_dup, g, dg);
    if (wrap) dg[0] += dg[N];
    for (int i = 0; i < N; i++) D[i][j] = dg[i];
    // the same column with (double*)0x1 as the gradient's primal (enzyme_dupnoneed)
    double dn[N + 1] = {0};
    __enzyme_fwddiff((void *)grad, enzyme_const, (size_t)N, enzyme_dup, xx, e,
                     enzyme_dupnoneed, (double *)0x1, dn);
    if (wrap) dn[0] += dn[N];
    // and with a real primal buffer full of NaN: its values must not matter
    double nan_buf[N + 1], dq[N + 1] = {0};
    for (int i = 0; i <= N; i++) nan_buf[i] = NAN;
    __enzyme_fwddiff((void *)grad, enzyme_const, (size_t)N, enzyme_dup, xx, e,
                     enzyme_dupnoneed, nan_buf, dq);
    if (wrap) dq[0] += dq[N];
    for (int i = 0; i < N; i++) {
      snprintf(name, sizeof name, "%s_noneed_0x1_H[%d][%d]", tag, i, j);
      check(name, dn[i], D[i][j]);
      snprintf(name, sizeof name, "%s_noneed_nan_H[%d][%d]", tag, i, j);
      check(name, dq[i], D[i][j]);
    }
  }
  // central differences of the gradient
  const double h = 1e-5;
  for (int j = 0; j < N; j++) {
    double xp[N], xm[N], gp[N] = {0}, gm[N] = {0};
    memcpy(xp, x, sizeof xp);
    memcpy(xm, x, sizeof xm);
    xp[j] += h;
    xm[j] -= h;
    if (wrap) {
      ring_grad_dense(N, xp, gp);
      ring_grad_dense(N, xm, gm);
    } else {
      grad(N, xp, gp);
      grad(N, xm, gm);
    }
    for (int i = 0; i < N; i++) FD[i][j] = (gp[i] - gm[i]) / (2 * h);
  }
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      snprintf(name, sizeof name, "%s_sparse_H[%d][%d]", tag, i, j);
      check(name, S[i][j], D[i][j]);
      snprintf(name, sizeof name, "%s_fd_H[%d][%d]", tag, i, j);
      check(name, D[i][j], FD[i][j]);
    }
  // forward vs reverse on the energy (dot-product test)
  double v[N + 1], gr[N + 1] = {0}, dot = 0;
  for (int i = 0; i < N; i++) v[i] = sin(0.7 + 3.1 * i);
  v[N] = v[0];
  grad(N, xx, gr);
  if (wrap) gr[0] += gr[N];
  for (int i = 0; i < N; i++) dot += gr[i] * v[i];
  snprintf(name, sizeof name, "%s_fwd_vs_rev", tag);
  check(name, __enzyme_fwddiff_d((void *)energy, enzyme_const, (size_t)N, enzyme_dup, xx, v), dot);
}

int main() {
  double x[N];
  for (int i = 0; i < N; i++) x[i] = 0.3 * (i + 1) * (i + 1) - 0.1 * (i % 2);
  test<ring_grad, ring, ring_hessian>("ring", x, true);
  test<chain_grad, chain, chain_hessian>("chain", x, false);
  double a[3] = {1.5, 2, 3}, da[3] = {1, 1, 1}, out[3], dout[3];
  __enzyme_fwddiff((void *)prefix_product, enzyme_dupnoneed, out, dout, enzyme_dup, a, da, 3);
  check("prefix_d0", dout[0], 1);
  check("prefix_d1", dout[1], a[0] + a[1]);
  check("prefix_d2", dout[2], a[1] * a[2] + a[0] * a[2] + a[0] * a[1]);
  double o[3] = {4, 5, 6}, dn[3] = {0, 0.5, 0};
  __enzyme_fwddiff((void *)scale, enzyme_dupnoneed, o, dn, enzyme_dup, a, da, 3);
  check("scale_d0", dn[0], 4);
  check("scale_d1", dn[1], 5 + 0.5 * a[1]);
  check("scale_d2", dn[2], 6);
  double g[2], dg2[2] = {0, 0}, one = 1;
  __enzyme_fwddiff((void *)through_global, enzyme_dupnoneed, g, dg2, enzyme_dup, a, &one);
  check("escaped_d0", dg2[0], 3);
  check("escaped_d1", dg2[1], 18 * a[0]);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
