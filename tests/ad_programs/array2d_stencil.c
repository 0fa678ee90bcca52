/* Fixed-size 2-D arrays (double (*)[N]): a 5-point Laplacian stencil energy. */
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
#define N 5
int enzyme_dup;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random direction entries */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

double dirichlet(double u[N][N]) {
  double e = 0;
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < N - 1; j++) {
      double lap = u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1] - 4 * u[i][j];
      e += lap * lap;
    }
  return e;
}

int main(void) {
  double u[N][N], du[N][N] = {{0}};
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) u[i][j] = sin(0.7 * i) * cos(0.4 * j) + 0.1 * i * j;
  __enzyme_autodiff((void *)dirichlet, enzyme_dup, u, du);
  const double h = 1e-6;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      if ((i + j) % 3) continue;   /* a subset keeps the output short */
      double old = u[i][j];
      u[i][j] = old + h;
      double fp = dirichlet(u);
      u[i][j] = old - h;
      double fm = dirichlet(u);
      u[i][j] = old;
      checki("du", i * N + j, du[i][j], (fp - fm) / (2 * h));
    }
  /* forward/reverse dot test: the tangent along a direction v equals v . gradient */
  double v[N][N], vdu = 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) { v[i][j] = rnd(i * N + j); vdu += v[i][j] * du[i][j]; }
  check("dot_dirichlet", __enzyme_fwddiff((void *)dirichlet, enzyme_dup, u, v), vdu);
  return report();
}
