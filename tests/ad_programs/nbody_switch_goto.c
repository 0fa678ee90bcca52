/* A small particle simulation: a struct of heap arrays, memset/memcpy, nested loops with
   continue, a switch with goto inside the time loop, frees at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
double __enzyme_autodiff(void*, ...);
double __enzyme_fwddiff(void*, ...);
int enzyme_const, enzyme_dup, enzyme_width, enzyme_dupv;
typedef struct { double d[4]; } V4;
V4 __enzyme_fwddiff4(void*, ...) __asm__("__enzyme_fwddiff");
typedef struct { int n; double *pos, *vel; double mass; } System;
static void forces(const System *s, double *f) {
  memset(f, 0, s->n * sizeof(double));
  for (int i = 0; i < s->n; i++) for (int j = 0; j < s->n; j++) { if (i == j) continue;
    double d = s->pos[i] - s->pos[j]; double r2 = d*d + 0.01; f[i] += -d / (r2 * sqrt(r2)); } }
double simulate(double *pos0, int n, int steps) {
  System s = { n, malloc(n * sizeof(double)), calloc(n, sizeof(double)), 1.0 };
  memcpy(s.pos, pos0, n * sizeof(double));
  double *f = malloc(n * sizeof(double)); double e = 0;
  for (int t = 0; t < steps; t++) {
    forces(&s, f);
    for (int i = 0; i < n; i++) { s.vel[i] += 0.01 * f[i] / s.mass; s.pos[i] += 0.01 * s.vel[i]; }
    switch (t % 3) { case 0: e += s.pos[0] * s.pos[0]; break; case 1: e += fabs(s.vel[1]); break; default: goto skip; }
    skip:;
  }
  for (int i = 0; i < n; i++) e += s.pos[i] * s.vel[i];
  free(s.pos); free(s.vel); free(f); return e;
}
int main() { int n = 4; double p[4] = {0, 1.1, 2.3, 3.2}, dp[4] = {0};
  __enzyme_autodiff((void*)simulate, p, dp, enzyme_const, n, enzyme_const, 20);
  int bad = 0; for (int i = 0; i < n; i++) { double h = 1e-6, s = p[i]; p[i] = s + h; double a = simulate(p, n, 20); p[i] = s - h; double b = simulate(p, n, 20); p[i] = s;
    double fd = (a - b) / (2*h); printf("CHECK dp[%d] %.12g %.12g%s\n", i, dp[i], fd, fabs(dp[i] - fd) > 1e-5 * (1 + fabs(fd)) ? "  <-- FAILED" : ""); bad += fabs(dp[i] - fd) > 1e-5 * (1 + fabs(fd)); }
  /* dot test: forward J.v versus v . (reverse gradient), v deterministic pseudo-random */
  double v[4], vg = 0; for (int i = 0; i < n; i++) { v[i] = sin(1.3 + 7.1 * i); vg += v[i] * dp[i]; }
  double jv = __enzyme_fwddiff((void*)simulate, p, v, enzyme_const, n, enzyme_const, 20);
  int off = fabs(jv - vg) > 1e-5 * (1 + fabs(vg)); bad += off;
  printf("CHECK dot_simulate %.12g %.12g%s\n", jv, vg, off ? "  <-- FAILED" : "");
  /* vector forward mode: 4 directions (dupv, rows of v4) in one call versus 4 width-1 calls */
  double v4[4][4]; for (int k = 0; k < 4; k++) for (int i = 0; i < n; i++) v4[k][i] = sin(1.3 + 7.1 * (4 + 4 * k + i));
  V4 j4 = __enzyme_fwddiff4((void*)simulate, enzyme_width, 4, enzyme_dupv, sizeof v4[0], p, v4, enzyme_const, n, enzyme_const, 20);
  for (int k = 0; k < 4; k++) { double j1 = __enzyme_fwddiff((void*)simulate, enzyme_dup, p, v4[k], enzyme_const, n, enzyme_const, 20);
    off = fabs(j4.d[k] - j1) > 1e-5 * (1 + fabs(j1)); bad += off;
    printf("CHECK vec_simulate_%d %.12g %.12g%s\n", k, j4.d[k], j1, off ? "  <-- FAILED" : ""); }
  if (bad) printf("FAILED: %d check(s)\n", bad);
  return bad != 0; }
