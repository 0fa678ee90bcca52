// f(b) = u^T (B^T D B) u with B (3x6) copied from b; exact gradient dB = 2 D B u u^T
#include <Eigen/Dense>
#include <cstdio>
#include <cmath>
extern int enzyme_dup;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
static const double U[6] = {0.1, -0.2, 0.3, 0.05, -0.1, 0.2};
double f(const double *b) {
  Eigen::Matrix<double, 3, 6> B;
  for (int i = 0; i < 18; i++) B(i) = b[i];
  Eigen::Matrix3d D;
  D << 2, 0.6, 0, 0.6, 2, 0, 0, 0, 0.7;
  Eigen::Matrix<double, 6, 6> K = B.transpose() * D * B;
  Eigen::Matrix<double, 6, 1> u(U);
  return u.dot(K * u);
}
int main() {
  double b[18], db[18] = {0}, v[18];
  for (int i = 0; i < 18; i++) { b[i] = std::sin(1.0 + 0.7 * i); v[i] = std::cos(0.37 * i); }
  __enzyme_autodiff((void *)f, enzyme_dup, b, db);
  double tan = __enzyme_fwddiff((void *)f, enzyme_dup, b, v);
  Eigen::Map<Eigen::Matrix<double, 3, 6>> B(b);
  Eigen::Matrix3d D; D << 2, 0.6, 0, 0.6, 2, 0, 0, 0, 0.7;
  Eigen::Matrix<double, 6, 1> u(U);
  Eigen::Matrix<double, 3, 6> G = 2 * D * B * u * u.transpose();   // exact gradient
  double maxerr = 0, dot = 0;
  for (int i = 0; i < 18; i++) { maxerr = std::fmax(maxerr, std::fabs(G(i) - db[i])); dot += G(i) * v[i]; }
  std::printf("reverse: max |grad - exact| = %.3e   (db[7] = %.10f, exact %.10f)\n", maxerr, db[7], G(7));
  std::printf("forward: tangent = %.10f, exact <grad,v> = %.10f\n", tan, dot);
  return maxerr > 1e-10 || std::fabs(tan - dot) > 1e-10;
}
