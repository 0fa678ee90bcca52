/* A loop driven by a floating-point time variable (for t = 0; t < T; t += dt), explicit Euler
   for x' = -k x + sin(t): the time variable is inactive, x and k active. */
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
typedef struct { double dx0, dk; } D2;
int enzyme_const;
D2 __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

double euler(double x0, double k, double dt) {
  double x = x0;
  for (double t = 0; t < 1.0 - 1e-9; t += dt) x += dt * (-k * x + sin(t));
  return x;
}

int main(void) {
  double x0 = 1.5, k = 0.7, dt = 0.01, h = 1e-6;
  D2 g = __enzyme_autodiff((void *)euler, x0, k, enzyme_const, dt);
  check("dx0", g.dx0, pow(1 - dt * k, 100));
  check("dk", g.dk, (euler(x0, k + h, dt) - euler(x0, k - h, dt)) / (2 * h));
  /* forward/reverse dot test: the tangent along a direction v equals v . gradient */
  const double vx0 = sin(1.3), vk = sin(8.4);
  check("dot_euler", __enzyme_fwddiff((void *)euler, x0, vx0, k, vk, enzyme_const, dt), vx0 * g.dx0 + vk * g.dk);
  return report();
}
