// Sparse Hessian of a cloth-like triangle energy (area and edge-length terms on a strip of
// triangles) through __enzyme_todense, the triplets collected in a std::vector by an
// enzyme_sparse_accumulate function; checked against the dense forward-over-reverse Hessian and
// central finite differences of the gradient, and the sparsity pattern against the mesh.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
static int failed;
static void check(const char *name, double got, double want) {
  bool ok = std::fabs(got - want) <= 1e-5 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
template <typename R, typename... A> R __enzyme_autodiff(void *, A...);
template <typename R, typename... A> R __enzyme_fwddiff(void *, A...);
template <typename R, typename... A> R __enzyme_todense(A...) noexcept;

enum { NV = 5, NT = 3, N = 3 * NV };
static const int tris[NT][3] = {{0, 1, 2}, {1, 3, 2}, {2, 3, 4}};

static double tri_area(const double *a, const double *b, const double *c) {
  double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
  double v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
  double w[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
  return 0.5 * std::sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
}
static double edge_len(const double *a, const double *b) {
  double d0 = b[0] - a[0], d1 = b[1] - a[1], d2 = b[2] - a[2];
  return std::sqrt(d0 * d0 + d1 * d1 + d2 * d2);
}

double cloth_energy(const double *pos, const int *t, int64_t nt) {
  double e = 0;
  for (int64_t k = 0; k < nt; k++) {
    const double *a = pos + 3 * t[3 * k], *b = pos + 3 * t[3 * k + 1], *c = pos + 3 * t[3 * k + 2];
    double da = tri_area(a, b, c) - 0.4;
    e += 2.0 * da * da;
    double l = edge_len(a, b) - 1.0;
    e += 0.5 * l * l;
  }
  return e;
}

void cloth_gradient(const double *pos, double *g, const int *t, int64_t nt) {
  __enzyme_autodiff<void>((void *)cloth_energy, enzyme_dup, pos, g, enzyme_const, t,
                          enzyme_const, nt);
}

struct Triple { int64_t row, col; double val; };

template <typename T> static T unit_load(int64_t offset, int64_t j) {
  return offset / (int64_t)sizeof(T) == j ? T(1) : T(0);
}
template <typename T> static void no_store(T, int64_t, int64_t) {}
template <typename T> static T zero_load(int64_t, int64_t, std::vector<Triple> *) { return T(0); }

__attribute__((enzyme_sparse_accumulate))
static void record(int64_t row, int64_t col, double v, std::vector<Triple> *h) {
  h->push_back({row, col, v});
}
template <typename T> static void triplet_store(T v, int64_t offset, int64_t j, std::vector<Triple> *h) {
  if (v != T(0)) record(offset / (int64_t)sizeof(T), j, v, h);
}

__attribute__((noinline)) std::vector<Triple> sparse_hessian(const double *pos) {
  std::vector<Triple> h;
  double g[N];
  for (int64_t j = 0; j < N; j++)
    __enzyme_fwddiff<void>((void *)cloth_gradient, enzyme_dup, pos,
                           __enzyme_todense<double *>((void *)unit_load<double>,
                                                      (void *)no_store<double>, j),
                           enzyme_dup, g,
                           __enzyme_todense<double *>((void *)zero_load<double>,
                                                      (void *)triplet_store<double>, j, &h),
                           enzyme_const, &tris[0][0], enzyme_const, (int64_t)NT);
  return h;
}

static bool share_triangle(int u, int v) {
  for (int k = 0; k < NT; k++) {
    bool hu = false, hv = false;
    for (int q = 0; q < 3; q++) hu |= tris[k][q] == u, hv |= tris[k][q] == v;
    if (hu && hv) return true;
  }
  return false;
}

int main() {
  double pos[N] = {0, 0, 0.1, 1, 0, -0.2, 0.3, 0.9, 0.05, 1.2, 1.1, 0.3, 0.6, 1.8, -0.1};
  static double D[N][N], H[N][N];
  char name[64];
  for (int j = 0; j < N; j++) {
    double e[N] = {0}, g[N] = {0}, dg[N] = {0};
    e[j] = 1;
    __enzyme_fwddiff<void>((void *)cloth_gradient, enzyme_dup, pos, e, enzyme_dup, g, dg,
                           enzyme_const, &tris[0][0], enzyme_const, (int64_t)NT);
    for (int i = 0; i < N; i++) D[i][j] = dg[i];
  }
  std::vector<Triple> h = sparse_hessian(pos);
  int outside = 0, distinct = 0;
  static bool seen[N][N];
  for (const Triple &t : h) {
    H[t.row][t.col] += t.val;
    distinct += !seen[t.row][t.col];
    seen[t.row][t.col] = true;
    outside += !share_triangle(int(t.row / 3), int(t.col / 3));
  }
  check("entries_outside_mesh", outside, 0);
  check("distinct_entries_below_dense", distinct < N * N, 1);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      std::snprintf(name, sizeof name, "H[%d][%d]", i, j);
      check(name, H[i][j], D[i][j]);
    }
  const double step = 1e-5;
  for (int j = 0; j < N; j++) {
    double xp[N], xm[N], gp[N] = {0}, gm[N] = {0};
    std::memcpy(xp, pos, sizeof pos);
    std::memcpy(xm, pos, sizeof pos);
    xp[j] += step;
    xm[j] -= step;
    cloth_gradient(xp, gp, &tris[0][0], NT);
    cloth_gradient(xm, gm, &tris[0][0], NT);
    for (int i = 0; i < N; i++) {
      std::snprintf(name, sizeof name, "fd_H[%d][%d]", i, j);
      check(name, D[i][j], (gp[i] - gm[i]) / (2 * step));
    }
  }
  double v[N], gr[N] = {0}, dot = 0;
  for (int i = 0; i < N; i++) v[i] = std::sin(1.3 + 7.1 * i);
  cloth_gradient(pos, gr, &tris[0][0], NT);
  for (int i = 0; i < N; i++) dot += gr[i] * v[i];
  check("fwd_vs_rev", __enzyme_fwddiff<double>((void *)cloth_energy, enzyme_dup, pos, v,
                                               enzyme_const, &tris[0][0], enzyme_const, (int64_t)NT),
        dot);
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
