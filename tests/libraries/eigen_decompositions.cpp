/* Eigen 3's eigensolvers and LU, differentiated through the library's own code: the symmetric
   eigensolver's values and vectors (tridiagonalization through selfadjoint products, whose
   right-hand side is the operand's data, a stack block or a heap block by its size: refused
   before, "pointer joins shadowed and unshadowed memory"), the general eigensolver's complex
   eigenvalues (a scalar and a vector's address kept as one <2 x double> register by SROA, the
   address taken back out with inttoptr: refused before, "float data accessed through a pointer
   made from an integer") and PartialPivLU's log-determinant. Reverse mode against central
   finite differences, forward mode against reverse. Prints `CHECK name got want`. */
#include <Eigen/Dense>
#include <cmath>
#include <cstdio>
extern "C" {
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
extern int enzyme_dup;
}
using namespace Eigen;
enum { N = 7 };
static int failed;
static void check(const char *name, double got, double want) {
  int ok = std::fabs(got - want) <= 1e-5 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}

static MatrixXd symmetric(const double *a) {
  Map<const MatrixXd> A(a, N, N);
  return (A + A.transpose()) * 0.5;
}

/* weighted eigenvalues and squared eigenvector entries (their signs do not matter) */
static double eig_sym(const double *a) {
  SelfAdjointEigenSolver<MatrixXd> es(symmetric(a));
  double s = 0;
  for (int j = 0; j < N; j++) {
    s += std::sin(j + 1.0) * es.eigenvalues()(j);
    for (int i = 0; i < N; i++) s += std::cos(i + 3.0 * j) * es.eigenvectors()(i, j) * es.eigenvectors()(i, j);
  }
  return s;
}

/* sum of the squared complex eigenvalues: the trace of A^2, whatever their order */
static double eig_general(const double *a) {
  EigenSolver<MatrixXd> es(Map<const MatrixXd>(a, N, N), false);
  double s = 0;
  for (int i = 0; i < N; i++) s += (es.eigenvalues()(i) * es.eigenvalues()(i)).real();
  return s;
}

static double lu_logdet(const double *a) {
  PartialPivLU<MatrixXd> lu(Map<const MatrixXd>(a, N, N));
  return std::log(std::fabs(lu.determinant()));
}

/* the function is a template argument: a marker needs it known at compile time */
template <double (*f)(const double *)> static void fd_check(const char *name, double *a) {
  double da[N * N] = {0}, v[N * N], dot = 0, worst = 0, scale = 0;
  __enzyme_autodiff((void *)f, enzyme_dup, a, da);
  for (int k = 0; k < N * N; k++) {
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
  double a[N * N];
  for (int k = 0; k < N * N; k++) a[k] = std::sin(1.7 * k + 0.3) * 0.5;
  for (int i = 0; i < N; i++) a[i * N + i] += 1.0 + 0.3 * i;   /* distinct eigenvalues, det != 0 */
  fd_check<eig_sym>("eig_sym", a);
  fd_check<eig_general>("eig_general", a);
  fd_check<lu_logdet>("lu_logdet", a);
  return failed != 0;
}
