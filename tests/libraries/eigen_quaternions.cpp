/* Eigen's quaternions: a chain of rotations (AngleAxis -> Quaternion products), its distance to a
   target (angularDistance: the conjugate negates three lanes with a xor of -0.0 on the bits of
   SSE packets, which SROA keeps as <2 x i64> carried around the loop) and a rotation matrix
   entry. The distance term was lost (a zero gradient, silently) or refused ("integer arithmetic
   on data that holds a float"). Reverse mode against central finite differences, forward
   against reverse. Prints `CHECK name got want`. */
#include <Eigen/Geometry>
#include <cmath>
#include <cstdio>
extern "C" {
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
}
extern int enzyme_dup, enzyme_const;
static int failed;
static void check(const char *name, double got, double want) {
  int ok = std::fabs(got - want) <= 1e-6 * (1.0 + std::fabs(want));
  std::printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}

// joint angles q (n of them) about fixed axes: distance of the end rotation to a target, plus
// one rotation-matrix entry
double chain(const double *q, int n) {
  static const double axes[3][3] = {{0, 0, 1}, {0, 1, 0}, {1, 0, 0}};
  Eigen::Quaterniond R = Eigen::Quaterniond::Identity();
  for (int i = 0; i < n; i++)
    R = R * Eigen::Quaterniond(Eigen::AngleAxisd(
                q[i], Eigen::Vector3d(axes[i % 3][0], axes[i % 3][1], axes[i % 3][2])));
  Eigen::Quaterniond target(Eigen::AngleAxisd(0.3, Eigen::Vector3d::UnitZ()));
  double d = target.angularDistance(R);
  return d * d + R.toRotationMatrix()(0, 1);
}

// a quaternion given by its coefficients, its distance to a fixed one
double distance(const double *c, int) {
  Eigen::Quaterniond R(c[0], c[1], c[2], c[3]);
  Eigen::Quaterniond target(0.8, 0.0, 0.0, 0.6);
  return target.angularDistance(R);
}

static void gradient_check(const char *name, double (*f)(const double *, int), double *x, int n) {
  double dx[8] = {0}, v[8], vdx = 0;
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, n);
  for (int i = 0; i < n; i++) {
    double h = 1e-6, xp[8], xm[8];
    for (int j = 0; j < n; j++) xp[j] = xm[j] = x[j];
    xp[i] += h;
    xm[i] -= h;
    char label[48];
    std::snprintf(label, sizeof label, "%s.d[%d]", name, i);
    check(label, dx[i], (f(xp, n) - f(xm, n)) / (2 * h));
    v[i] = std::sin(0.7 + 1.3 * i);
    vdx += v[i] * dx[i];
  }
  char label[48];
  std::snprintf(label, sizeof label, "%s.dot", name);
  check(label, __enzyme_fwddiff((void *)f, enzyme_dup, x, v, enzyme_const, n), vdx);
}

int main() {
  double q[5] = {0.5, -0.4, 0.7, 0.2, -0.9}, c[4] = {0.9, 0.1, -0.2, 0.3};
  gradient_check("chain", chain, q, 5);
  gradient_check("distance", distance, c, 4);
  if (failed) std::printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
