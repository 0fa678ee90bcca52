/* Eigen 3's sparse matrices and solvers, and its SSE 4x4 inverse, differentiated through the
   library's code: a conjugate-gradient solve, SimplicialLDLT, SparseLU (which records its
   status in a std::string: libstdc++'s string members have no bitcode and carry no derivative)
   and a sparse product. Building the matrices copies their int index arrays into grown blocks
   (refused before: "cannot deduce the type of the memory being copied"; the pointer's C type
   `int *` says it). Matrix4d::inverse flips cofactor signs with a xor of -0.0 on the bits (its
   gradient was wrong before with no error). Reverse mode against central finite differences,
   forward mode against reverse. Prints `CHECK name got want`. */
#include <Eigen/Dense>
#include <Eigen/Sparse>
#include <cmath>
#include <cstdio>
#include <vector>
extern "C" {
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
extern int enzyme_dup;
}
using namespace Eigen;
enum { N = 8, M = 3 * N };
static int failed;
static void check(const char *name, double got, double want) {
  int ok = std::fabs(got - want) <= 1e-5 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}

/* a symmetric positive definite tridiagonal matrix, or with `general` a nonsymmetric one */
static SparseMatrix<double> matrix(const double *a, bool general) {
  std::vector<Triplet<double>> t;
  for (int i = 0; i < N; i++) {
    t.emplace_back(i, i, 4 + a[i]);
    if (i + 1 < N) {
      t.emplace_back(i, i + 1, -1 + 0.1 * a[N + i]);
      t.emplace_back(i + 1, i, general ? 0.3 * a[2 * N + i] : -1 + 0.1 * a[N + i]);
    }
  }
  SparseMatrix<double> A(N, N);
  A.setFromTriplets(t.begin(), t.end());
  A.makeCompressed();
  return A;
}

static double cg(const double *a) {
  SparseMatrix<double> A = matrix(a, false);      /* (the solver keeps a reference to it) */
  ConjugateGradient<SparseMatrix<double>> s;
  s.setTolerance(1e-14);
  s.compute(A);
  return s.solve(VectorXd::LinSpaced(N, 1, 2)).sum();
}

static double ldlt(const double *a) {
  SimplicialLDLT<SparseMatrix<double>> s(matrix(a, false));
  return s.solve(VectorXd::LinSpaced(N, 1, 2)).squaredNorm();
}

static double sparse_lu(const double *a) {
  SparseMatrix<double> A = matrix(a, true);
  SparseLU<SparseMatrix<double>> lu;
  lu.analyzePattern(A);
  lu.factorize(A);
  return lu.solve(VectorXd::LinSpaced(N, 1, 2)).sum();
}

static double product(const double *a) {
  SparseMatrix<double> A = matrix(a, true);
  VectorXd v = Map<const VectorXd>(a, N), y = A * v;
  return (A.transpose() * y).dot(v);
}

static double inverse4(const double *a) {
  Map<const Matrix4d> B(a);
  return (B + 5 * Matrix4d::Identity()).inverse().sum() + B.determinant();
}

/* the function is a template argument: a marker needs it known at compile time */
template <double (*f)(const double *)> static void fd_check(const char *name, double *a) {
  double da[M] = {0}, v[M], dot = 0, worst = 0, scale = 0;
  __enzyme_autodiff((void *)f, enzyme_dup, a, da);
  for (int k = 0; k < M; k++) {
    double h = 1e-6, keep = a[k];
    a[k] = keep + h;
    double up = f(a);
    a[k] = keep - h;
    double down = f(a);
    a[k] = keep;
    double fd = (up - down) / (2 * h);
    worst = std::fmax(worst, std::fabs(fd - da[k]));
    scale = std::fmax(scale, std::fabs(fd));
    v[k] = std::sin(0.7 * k + 0.2);
    dot += v[k] * da[k];
  }
  char label[64];
  std::snprintf(label, sizeof label, "%s_rev", name);
  check(label, worst / (1 + scale), 0.0);
  std::snprintf(label, sizeof label, "%s_fwd", name);
  check(label, __enzyme_fwddiff((void *)f, enzyme_dup, a, v), dot);
}

int main() {
  double a[M];
  for (int k = 0; k < M; k++) a[k] = std::sin(1.3 * k + 0.4) * 0.5;
  fd_check<cg>("cg", a);
  fd_check<ldlt>("ldlt", a);
  fd_check<sparse_lu>("sparse_lu", a);
  fd_check<product>("product", a);
  fd_check<inverse4>("inverse4", a);
  return failed != 0;
}
