/* Vector forward mode through loops, branches, calls (the callee's vector derivative), malloc'd
   temporaries, a pointer-returning callee and libm: width 4 and width 8 equal separate width-1
   forward calls, lane by lane. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
typedef struct { double d[4]; } V4;
typedef struct { double d[8]; } V8;
void __enzyme_fwddiff(void*, ...);
V4 __enzyme_fwddiff4(void*, ...) __asm__("__enzyme_fwddiff");
V8 __enzyme_fwddiff8(void*, ...) __asm__("__enzyme_fwddiff");
double __enzyme_fwddiff1(void*, ...) __asm__("__enzyme_fwddiff");
int enzyme_width, enzyme_dupv, enzyme_const, enzyme_dup;

#define N 6
__attribute__((noinline)) static double *row(double *m, int i) { return m + i * N; }

__attribute__((noinline)) static double mix(const double *a, double s, int n) {
  double acc = 0;
  for (int i = 0; i < n; i++)
    acc += (a[i] > 0 ? sin(a[i]) : a[i] * a[i]) * s;
  return acc;
}

/* y = F(x): vector output through memory, scalar return */
double F(const double *x, double *y, double scale) {
  double *tmp = malloc(N * N * sizeof(double));
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      row(tmp, i)[j] = x[i] * cos(x[j]) + (i == j ? exp(x[i] * 0.1) : 0.0);
  double total = 0;
  for (int i = 0; i < N; i++) {
    y[i] = mix(row(tmp, i), scale, N);
    total += y[i] * x[i];
  }
  free(tmp);
  return total;
}

int main(void) {
  double x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = 0.3 * i - 0.7;
  /* 8 directions, stored contiguously: lane k at dx + k*N */
  double dx[8][N], dy[8][N], dy1[N];
  for (int k = 0; k < 8; k++)
    for (int i = 0; i < N; i++) dx[k][i] = sin(1.0 + k * 7 + i * 3);
  double dscale[8];
  for (int k = 0; k < 8; k++) dscale[k] = 0.1 * k - 0.2;

  V8 r8 = __enzyme_fwddiff8((void*)F, enzyme_width, 8, enzyme_dupv, sizeof(dx[0]), x, dx,
                            enzyme_dupv, sizeof(dy[0]), y, dy,
                            1.3, dscale[0], dscale[1], dscale[2], dscale[3], dscale[4], dscale[5],
                            dscale[6], dscale[7]);
  for (int k = 0; k < 8; k++) {
    double t = __enzyme_fwddiff1((void*)F, enzyme_dup, x, dx[k], enzyme_dup, y, dy1, 1.3, dscale[k]);
    printf("w8 lane %d ret: %.12g | %.12g\n", k, r8.d[k], t);
    for (int i = 0; i < N; i++)
      printf("w8 lane %d dy[%d]: %.12g | %.12g\n", k, i, dy[k][i], dy1[i]);
  }

  V4 r4 = __enzyme_fwddiff4((void*)F, enzyme_width, 4, enzyme_dup, x, dx[0], dx[1], dx[2], dx[3],
                            enzyme_dup, y, dy[0], dy[1], dy[2], dy[3],
                            enzyme_const, 1.3);
  for (int k = 0; k < 4; k++) {
    double t = __enzyme_fwddiff1((void*)F, enzyme_dup, x, dx[k], enzyme_dup, y, dy1, enzyme_const, 1.3);
    printf("w4 lane %d ret: %.12g | %.12g\n", k, r4.d[k], t);
    for (int i = 0; i < N; i++)
      printf("w4 lane %d dy[%d]: %.12g | %.12g\n", k, i, dy[k][i], dy1[i]);
  }
  /* a finite-difference check of lane 2 of the width-4 result */
  double h = 1e-6, xp[N], xm[N];
  for (int i = 0; i < N; i++) { xp[i] = x[i] + h * dx[2][i]; xm[i] = x[i] - h * dx[2][i]; }
  double fd = (F(xp, y, 1.3) - F(xm, y, 1.3)) / (2 * h);
  printf("w4 lane 2 fd: %.6g | %.6g\n", r4.d[2], fd);
  return 0;
}
