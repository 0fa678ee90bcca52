/* The gradient called many times in an optimization loop: gradient descent on a 3-D
   quadratic with a sin perturbation converges to a point where the gradient vanishes. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
static void checki(const char *name, int i, double got, double want) {
  char buf[64];
  snprintf(buf, sizeof buf, "%s[%d]", name, i);
  check(buf, got, want);
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
int enzyme_dup;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

static const double target[3] = {1.0, -2.0, 0.5};

double objective(const double *p) {
  double s = 0;
  for (int i = 0; i < 3; i++) s += (p[i] - target[i]) * (p[i] - target[i]);
  return s + 0.1 * sin(p[0] * p[1]);
}

int main(void) {
  double p[3] = {0, 0, 0}, g[3];
  for (int it = 0; it < 300; it++) {
    g[0] = g[1] = g[2] = 0;
    __enzyme_autodiff((void *)objective, enzyme_dup, p, g);
    for (int i = 0; i < 3; i++) p[i] -= 0.1 * g[i];
  }
  /* stationary point: 2 (p - target) + 0.1 cos(p0 p1) (p1, p0, 0) = 0 */
  double c = 0.1 * cos(p[0] * p[1]);
  check("stationary0", 2 * (p[0] - target[0]) + c * p[1], 0.0);
  check("stationary1", 2 * (p[1] - target[1]) + c * p[0], 0.0);
  check("stationary2", 2 * (p[2] - target[2]), 0.0);
  check("moved", fabs(p[1]) > 1.5, 1.0);
  /* forward/reverse dot test away from the optimum: the tangent along v equals v . gradient */
  double q[3] = {0.3, -0.8, 1.1}, v[3] = {sin(1.3), sin(8.4), sin(15.5)};
  g[0] = g[1] = g[2] = 0;
  __enzyme_autodiff((void *)objective, enzyme_dup, q, g);
  check("dot_objective", __enzyme_fwddiff((void *)objective, enzyme_dup, q, v), v[0] * g[0] + v[1] * g[1] + v[2] * g[2]);
  return report();
}
