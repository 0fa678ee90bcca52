/* Eigen 3 (header-only, SSE2 packets: <2 x double> loads/stores, shuffles, insert/extract
   element, unaligned and aligned accesses): dynamic and fixed-size matrices, products, a
   Cholesky solve, in reverse mode against central finite differences and forward against
   reverse. Prints `CHECK name got want`. */
#include <Eigen/Dense>
#include <cmath>
#include <cstdio>
extern "C" {
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}
using namespace Eigen;
static int failed;
static void check(const char *name, double got, double want) {
  int ok = std::fabs(got - want) <= 1e-5 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}

double layer(const MatrixXd *W, const VectorXd *b) {
  VectorXd y = (*W) * (*b);
  return y.squaredNorm() + W->sum() * 0.1 + y.array().tanh().sum();
}

double small(const Matrix3d *A) {
  Matrix3d B = (*A) * A->transpose();
  return B.trace() + B.determinant() * 0.01 + A->norm();
}

double solve(const MatrixXd *A, const VectorXd *r) {
  MatrixXd S = (*A) * A->transpose() + MatrixXd::Identity(A->rows(), A->rows());
  VectorXd x = S.llt().solve(*r);
  return x.dot(*r);
}

/* 24 x 24: Eigen's blocked GEMM (packing into workspaces, the gebp micro-kernel loading packets
   as integer vectors) */
double gemm(const MatrixXd *A, const MatrixXd *B) {
  MatrixXd S = (*A) * (*B);
  return (S.array() * S.array()).sum();
}

template <class F, class M> static void fd_check(const char *name, F f, M &x, const M &dx) {
  const double h = 1e-6;
  double worst = 0, scale = 0;
  for (Index i = 0; i < x.size(); i++) {
    double keep = x.data()[i];
    x.data()[i] = keep + h;
    double fp = f(x);
    x.data()[i] = keep - h;
    double fm = f(x);
    x.data()[i] = keep;
    double fd = (fp - fm) / (2 * h);
    worst = std::fmax(worst, std::fabs(fd - dx.data()[i]));
    scale = std::fmax(scale, std::fabs(fd));
  }
  check(name, worst / (1 + scale), 0.0);
}

int main() {
  MatrixXd W(3, 4), dW = MatrixXd::Zero(3, 4);
  VectorXd b(4), db = VectorXd::Zero(4);
  for (int i = 0; i < 12; i++) W.data()[i] = 0.1 * i - 0.3;
  for (int i = 0; i < 4; i++) b[i] = 0.5 - 0.2 * i;
  __enzyme_autodiff((void *)layer, &W, &dW, &b, &db);
  fd_check("layer_dW", [&](MatrixXd &m) { return layer(&m, &b); }, W, dW);
  fd_check("layer_db", [&](VectorXd &v) { return layer(&W, &v); }, b, db);
  MatrixXd vW(3, 4);
  VectorXd vb(4);
  for (int i = 0; i < 12; i++) vW.data()[i] = std::sin(1.3 + 7.1 * i);
  for (int i = 0; i < 4; i++) vb[i] = std::cos(0.4 * i);
  double jv = __enzyme_fwddiff((void *)layer, &W, &vW, &b, &vb);
  check("dot_layer", jv, (vW.array() * dW.array()).sum() + vb.dot(db));

  Matrix3d A, dA = Matrix3d::Zero(), vA;
  for (int i = 0; i < 9; i++) A.data()[i] = std::sin(i + 1.0), vA.data()[i] = std::cos(1.0 * i);
  __enzyme_autodiff((void *)small, &A, &dA);
  fd_check("small_dA", [](Matrix3d &m) { return small(&m); }, A, dA);
  check("dot_small", __enzyme_fwddiff((void *)small, &A, &vA), (vA.array() * dA.array()).sum());

  MatrixXd C(3, 3), dC = MatrixXd::Zero(3, 3);
  VectorXd r(3), dr = VectorXd::Zero(3);
  for (int i = 0; i < 9; i++) C.data()[i] = 0.3 * std::sin(2.0 * i + 0.5);
  for (int i = 0; i < 3; i++) r[i] = 1.0 - 0.4 * i;
  __enzyme_autodiff((void *)solve, &C, &dC, &r, &dr);
  fd_check("solve_dA", [&](MatrixXd &m) { return solve(&m, &r); }, C, dC);
  fd_check("solve_dr", [&](VectorXd &v) { return solve(&C, &v); }, r, dr);
  const int n = 24;
  MatrixXd P(n, n), Q(n, n), dP = MatrixXd::Zero(n, n), dQ = MatrixXd::Zero(n, n);
  for (int i = 0; i < n * n; i++) P.data()[i] = 0.01 * (i % 17), Q.data()[i] = 0.02 * (i % 13) - 0.1;
  __enzyme_autodiff((void *)gemm, &P, &dP, &Q, &dQ);
  MatrixXd S = P * Q;
  check("gemm_dA", (dP - 2 * S * Q.transpose()).norm(), 0.0);
  check("gemm_dB", (dQ - 2 * P.transpose() * S).norm(), 0.0);
  MatrixXd vP = MatrixXd::Constant(n, n, 0.1), vQ = MatrixXd::Identity(n, n);
  check("dot_gemm", __enzyme_fwddiff((void *)gemm, &P, &vP, &Q, &vQ),
        (vP.array() * dP.array()).sum() + (vQ.array() * dQ.array()).sum());
  return failed != 0;
}
