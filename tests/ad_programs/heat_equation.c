/* 1-D heat equation, explicit time stepping with two buffers swapped each step; loss is the
   weighted final temperature. Gradient with respect to the initial condition versus finite
   differences, and with respect to the diffusion number r. */
#include <math.h>
#include <stdio.h>
#include <string.h>
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
#define NX 12
#define STEPS 40
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random direction entries */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

double heat(const double *u0, double r) {
  double a[NX], b[NX];
  memcpy(a, u0, sizeof a);
  double *u = a, *v = b;
  for (int s = 0; s < STEPS; s++) {
    v[0] = 0;
    v[NX - 1] = 0;
    for (int i = 1; i < NX - 1; i++) v[i] = u[i] + r * (u[i - 1] - 2 * u[i] + u[i + 1]);
    double *t = u; u = v; v = t;
  }
  double loss = 0;
  for (int i = 0; i < NX; i++) loss += (i + 1) * u[i] * u[i];
  return loss;
}

int main(void) {
  double u0[NX], du0[NX] = {0}, r = 0.3;
  for (int i = 0; i < NX; i++) u0[i] = sin(3.14159 * i / (NX - 1)) + 0.1 * i;
  double dr = __enzyme_autodiff((void *)heat, enzyme_dup, u0, du0, r);
  const double h = 1e-6;
  for (int k = 0; k < NX; k++) {
    double old = u0[k];
    u0[k] = old + h;
    double fp = heat(u0, r);
    u0[k] = old - h;
    double fm = heat(u0, r);
    u0[k] = old;
    checki("du0", k, du0[k], (fp - fm) / (2 * h));
  }
  check("dr", dr, (heat(u0, r + h) - heat(u0, r - h)) / (2 * h));
  /* forward/reverse dot test: the tangent along a direction (v, vr) equals it . gradient */
  double v[NX], vr = rnd(NX), vg = vr * dr;
  for (int k = 0; k < NX; k++) { v[k] = rnd(k); vg += v[k] * du0[k]; }
  check("dot_heat", __enzyme_fwddiff((void *)heat, enzyme_dup, u0, v, r, vr), vg);
  return report();
}
