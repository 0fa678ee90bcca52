/* Double buffers over global arrays, as time-stepping codes keep them: global pointers swapped
   after each parallel step (heat), and local pointers to two global arrays swapped in a loop of
   parallel steps (heat2). Reverse mode against central differences, forward mode against the
   gradient, and a second reverse call after the forward one (the shadows start from zero
   again). Before 2026-11-30 heat2 crashed (the array only reached through the swapped pointers
   had no shadow) and its serial -O0 build was refused ("no shadow for '@V'"). */
#include <math.h>
#include <stdio.h>
#include <string.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
#define N 12
static double A[N], B[N];
static double *cur = A, *nxt = B;
__attribute__((noinline)) static void stepk(int n) {
#pragma omp parallel for
  for (int i = 0; i < n; i++) nxt[i] = cur[i] + 0.1 * (cur[(i + 1) % n] - 2 * cur[i] + cur[(i + n - 1) % n]) + 0.05 * sin(cur[i]);
  double *t = cur; cur = nxt; nxt = t;
}
double heat(const double *x, int n) {
  cur = A; nxt = B;
  for (int i = 0; i < n; i++) cur[i] = x[i];
  for (int s = 0; s < 5; s++) stepk(n);
  double e = 0;
  for (int i = 0; i < n; i++) e += cur[i] * cur[i];
  return e;
}
static double U[N], V[N];
double heat2(const double *x, int n) {          /* swapped pointers as locals, globals as storage */
  double *c = U, *d = V;
  for (int i = 0; i < n; i++) c[i] = x[i];
  for (int s = 0; s < 4; s++) {
#pragma omp parallel for
    for (int i = 0; i < n; i++) d[i] = c[i] * 0.9 + 0.1 * c[(i + 1) % n] * c[(i + 1) % n];
    double *t = c; c = d; d = t;
  }
  double e = 0;
  for (int i = 0; i < n; i++) e += c[i];
  return e;
}
int fails;
double total;
#define T(f) do { double x[N], dx[N] = {0}, xp[N], v[N], jv = 0; \
  for (int i = 0; i < N; i++) { x[i] = 0.3 + 0.5 * sin(1.1 + 2.3 * i); v[i] = cos(i); } \
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, N); \
  for (int i = 0; i < N; i++) { double h = 1e-6; memcpy(xp, x, sizeof x); xp[i] += h; double fp = f(xp, N); \
    xp[i] -= 2 * h; double fm = f(xp, N); double fd = (fp - fm) / (2 * h); jv += v[i] * dx[i]; total += dx[i]; \
    if (fabs(fd - dx[i]) > 1e-5 * (1 + fabs(fd))) { printf(#f "[%d] %g %g FAILED\n", i, dx[i], fd); fails++; } } \
  double fw = __enzyme_fwddiff((void *)f, enzyme_dup, x, v, enzyme_const, N); \
  if (fabs(fw - jv) > 1e-9 * (1 + fabs(jv))) { printf(#f " dot %g %g FAILED\n", fw, jv); fails++; } \
  double dx2[N] = {0}; __enzyme_autodiff((void *)f, enzyme_dup, x, dx2, enzyme_const, N); \
  for (int i = 0; i < N; i++) if (fabs(dx2[i] - dx[i]) > 1e-12 * (1 + fabs(dx[i]))) { printf(#f " again[%d] %g %g FAILED\n", i, dx2[i], dx[i]); fails++; } } while (0)
int main(void) {
  T(heat);
  T(heat2);
  printf("SUM %.17g\n", total);
  if (fails) printf("FAILED: %d check(s)\n", fails);
  return fails != 0;
}
