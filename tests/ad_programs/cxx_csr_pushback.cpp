// A sparse matrix in CSR form, a struct of std::vector<int> (row starts, columns) and
// std::vector<double> (values), assembled by push_back inside the differentiated function (no
// reserve: the vectors relocate while growing), then a few conjugate-gradient iterations on it.
// Growing the int vectors moves their elements with a memmove that nothing typed: the memory is
// only reached through the vector's end pointer at a run-time offset, and the struct also holds
// doubles (refused before: "cannot deduce the type of the memory being copied"); the int TBAA
// tag of those stores says what it holds. Reverse mode against central differences, forward
// mode against reverse.
#include <cmath>
#include <cstdio>
#include <vector>
static int failed;
static void check(const char *name, int i, double got, double want, double tol) {
  bool ok = std::fabs(got - want) <= tol * (1.0 + std::fabs(want));
  std::printf("CHECK %s[%d] %.12g %.12g%s\n", name, i, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern "C" {
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}
enum { N = 9 };

struct Csr {
  std::vector<int> start, col;
  std::vector<double> val;
};

// a tridiagonal SPD matrix with stiffness k[i] between neighbours, plus a mass term
static void assemble(Csr &a, const double *k, int n) {
  a.start.push_back(0);
  for (int i = 0; i < n; i++) {
    if (i > 0) { a.col.push_back(i - 1); a.val.push_back(-k[i]); }
    a.col.push_back(i);
    a.val.push_back(1.0 + k[i] + (i + 1 < n ? k[i + 1] : 0.0));
    if (i + 1 < n) { a.col.push_back(i + 1); a.val.push_back(-k[i + 1]); }
    a.start.push_back((int)a.col.size());
  }
}

static void matvec(const Csr &a, const std::vector<double> &x, std::vector<double> &y) {
  for (size_t i = 0; i + 1 < a.start.size(); i++) {
    double s = 0;
    for (int j = a.start[i]; j < a.start[i + 1]; j++) s += a.val[j] * x[a.col[j]];
    y[i] = s;
  }
}

// u = A(k)^-1 b by 12 CG iterations (enough to converge at n = 9); returns w . u
double compliance(const double *k, int n) {
  Csr a;
  assemble(a, k, n);
  std::vector<double> u(n, 0.0), r(n), p(n), q(n);
  for (int i = 0; i < n; i++) r[i] = p[i] = 1.0 + 0.1 * i;
  double rr = 0;
  for (int i = 0; i < n; i++) rr += r[i] * r[i];
  for (int it = 0; it < 12; it++) {
    matvec(a, p, q);
    double pq = 0;
    for (int i = 0; i < n; i++) pq += p[i] * q[i];
    double alpha = rr / pq, rr2 = 0;
    for (int i = 0; i < n; i++) {
      u[i] += alpha * p[i];
      r[i] -= alpha * q[i];
      rr2 += r[i] * r[i];
    }
    if (rr2 < 1e-28) break;
    for (int i = 0; i < n; i++) p[i] = r[i] + rr2 / rr * p[i];
    rr = rr2;
  }
  double s = 0;
  for (int i = 0; i < n; i++) s += (0.5 + 0.05 * i) * u[i];
  return s;
}

int main() {
  double k[N], dk[N] = {0}, dir[N];
  for (int i = 0; i < N; i++) {
    k[i] = 0.8 + 0.17 * i - 0.2 * (i % 3);
    dir[i] = 0.3 - 0.05 * i;
  }
  __enzyme_autodiff((void *)compliance, enzyme_dup, k, dk, enzyme_const, (int)N);
  double dot = 0, h = 1e-6;
  for (int i = 0; i < N; i++) {
    double kp[N], km[N];
    for (int j = 0; j < N; j++) kp[j] = km[j] = k[j];
    kp[i] += h;
    km[i] -= h;
    check("dk", i, dk[i], (compliance(kp, N) - compliance(km, N)) / (2 * h), 1e-6);
    dot += dk[i] * dir[i];
  }
  double t = __enzyme_fwddiff((void *)compliance, enzyme_dup, k, dir, enzyme_const, (int)N);
  check("dot", 0, t, dot, 1e-9);
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
