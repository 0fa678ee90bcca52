/* Classic RK4 integration of a damped pendulum for a fixed number of steps; gradient of the
   final angle with respect to the initial state and the damping, versus finite differences. */
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
/* vector forward mode: lane k (entry i >= 0) of a width-N call versus a width-1 call */
static void checkv(const char *name, int lane, int i, double got, double want) {
  char buf[64];
  if (i < 0) snprintf(buf, sizeof buf, "vec_%s_%d", name, lane);
  else snprintf(buf, sizeof buf, "vec_%s_%d_%d", name, lane, i);
  check(buf, got, want);
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
typedef struct { double d0, d1, d2; } D3;
D3 __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
int enzyme_width;
typedef struct { double d[4]; } V4;
V4 __enzyme_fwddiff4(void *, ...) __asm__("__enzyme_fwddiff");
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

static void rhs(const double *y, double c, double *dy) {
  dy[0] = y[1];
  dy[1] = -sin(y[0]) - c * y[1];
}

double pendulum(double theta0, double omega0, double c) {
  double y[2] = {theta0, omega0}, k1[2], k2[2], k3[2], k4[2], t[2];
  const double h = 0.05;
  for (int s = 0; s < 60; s++) {
    rhs(y, c, k1);
    for (int i = 0; i < 2; i++) t[i] = y[i] + 0.5 * h * k1[i];
    rhs(t, c, k2);
    for (int i = 0; i < 2; i++) t[i] = y[i] + 0.5 * h * k2[i];
    rhs(t, c, k3);
    for (int i = 0; i < 2; i++) t[i] = y[i] + h * k3[i];
    rhs(t, c, k4);
    for (int i = 0; i < 2; i++) y[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
  }
  return y[0];
}

int main(void) {
  double a = 1.0, b = 0.2, c = 0.3, h = 1e-6;
  D3 g = __enzyme_autodiff((void *)pendulum, a, b, c);
  check("dtheta0", g.d0, (pendulum(a + h, b, c) - pendulum(a - h, b, c)) / (2 * h));
  check("domega0", g.d1, (pendulum(a, b + h, c) - pendulum(a, b - h, c)) / (2 * h));
  check("ddamping", g.d2, (pendulum(a, b, c + h) - pendulum(a, b, c - h)) / (2 * h));
  /* forward tangent along t versus t . (reverse gradient) */
  double t[3] = {rnd(0), rnd(1), rnd(2)};
  check("dot_pendulum", __enzyme_fwddiff((void *)pendulum, a, t[0], b, t[1], c, t[2]),
        t[0] * g.d0 + t[1] * g.d1 + t[2] * g.d2);
  /* vector forward mode: 4 directions in (theta0, omega0, c) versus 4 width-1 calls */
  double u[4][3];
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < 3; i++) u[k][i] = rnd(3 + 3 * k + i);
  V4 t4 = __enzyme_fwddiff4((void *)pendulum, enzyme_width, 4, a, u[0][0], u[1][0], u[2][0], u[3][0],
                            b, u[0][1], u[1][1], u[2][1], u[3][1], c, u[0][2], u[1][2], u[2][2], u[3][2]);
  for (int k = 0; k < 4; k++)
    checkv("pendulum", k, -1, t4.d[k],
           __enzyme_fwddiff((void *)pendulum, a, u[k][0], b, u[k][1], c, u[k][2]));
  return report();
}
