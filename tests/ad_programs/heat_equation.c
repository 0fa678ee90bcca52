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
#define NX 12
#define STEPS 40
int enzyme_dup, enzyme_const, enzyme_width, enzyme_dupv;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
typedef struct { double d[4]; } V4;
V4 __enzyme_fwddiff4(void *, ...) __asm__("__enzyme_fwddiff");
typedef struct { double d[2]; } V2;
V2 __enzyme_fwddiff2(void *, ...) __asm__("__enzyme_fwddiff");
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
  /* vector forward mode: 4 directions in (u0, r) with u0 by dupv, then 2 with u0 constant,
     versus one width-1 call per direction */
  double v4[4][NX], vr4[4];
  for (int k = 0; k < 4; k++) {
    vr4[k] = rnd(NX + 1 + k);
    for (int i = 0; i < NX; i++) v4[k][i] = rnd(NX + 5 + k * NX + i);
  }
  V4 t4 = __enzyme_fwddiff4((void *)heat, enzyme_width, 4, enzyme_dupv, sizeof v4[0], u0, v4,
                            r, vr4[0], vr4[1], vr4[2], vr4[3]);
  for (int k = 0; k < 4; k++)
    checkv("heat", k, -1, t4.d[k], __enzyme_fwddiff((void *)heat, enzyme_dup, u0, v4[k], r, vr4[k]));
  V2 t2 = __enzyme_fwddiff2((void *)heat, enzyme_width, 2, enzyme_const, u0, r, vr4[0], vr4[1]);
  for (int k = 0; k < 2; k++)
    checkv("heat_r", k, -1, t2.d[k], __enzyme_fwddiff((void *)heat, enzyme_const, u0, r, vr4[k]));
  return report();
}
