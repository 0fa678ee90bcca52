/* Non-inlined callees called several times: a pure scalar function, a function reading an
   array, and one that updates memory through a pointer (each call needs its own cache). */
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
int enzyme_dup, enzyme_const, enzyme_width, enzyme_dupv;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
typedef struct { double d[4]; } V4;
V4 __enzyme_fwddiff4(void *, ...) __asm__("__enzyme_fwddiff");
typedef struct { double d[2]; } V2;
V2 __enzyme_fwddiff2(void *, ...) __asm__("__enzyme_fwddiff");
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }
static double dotp(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

__attribute__((noinline)) double softsq(double x) { return x * x / (1 + x * x); }

__attribute__((noinline)) double wsum(const double *x, int n, double w) {
  double s = 0;
  for (int i = 0; i < n; i++) s += w * x[i] * x[i];
  return s;
}

__attribute__((noinline)) void scale_in_place(double *x, int n, double s) {
  for (int i = 0; i < n; i++) x[i] *= s * x[i];
}

double scalar_calls(double x) { return softsq(x) + softsq(2 * x) * softsq(x - 1); }

double memory_calls(double *x, int n) {
  double a = wsum(x, n, 1.0);
  scale_in_place(x, n, 0.5);   /* x_i <- 0.5 x_i^2 */
  double b = wsum(x, n, 2.0);
  scale_in_place(x, n, 2.0);   /* x_i <- 2 (0.5 x_i^2)^2 = 0.5 x_i^4 */
  return a + b + wsum(x, n, 1.0);
}


int main(void) {
  const double h = 1e-6;
  double x = 0.7;
  check("scalar_calls", __enzyme_autodiff((void *)scalar_calls, x),
        (scalar_calls(x + h) - scalar_calls(x - h)) / (2 * h));
  /* forward tangent along t versus t * reverse derivative */
  check("dot_scalar_calls", __enzyme_fwddiff((void *)scalar_calls, x, rnd(0)),
        rnd(0) * __enzyme_autodiff((void *)scalar_calls, x));
  enum { N = 4 };
  double x0[N] = {0.5, -1, 1.5, 0.8}, v[N], dv[N] = {0};
  for (int i = 0; i < N; i++) v[i] = x0[i];
  __enzyme_autodiff((void *)memory_calls, enzyme_dup, v, dv, enzyme_const, N);
  /* f = sum x^2 + 2 sum (0.5 x^2)^2 + sum (0.5 x^4)^2 = sum x^2 + 0.5 x^4 + 0.25 x^8 */
  for (int i = 0; i < N; i++) {
    double xi = x0[i];
    checki("memory_calls", i, dv[i], 2 * xi + 2 * pow(xi, 3) + 2 * pow(xi, 7));
  }
  /* memory_calls maps x to (return value, x overwritten in place). Forward with tangent t gives
     (jr, t_out); reverse seeded with w in the shadow of x (and 1 on the return) gives the
     adjoint g of the input x: jr + t_out . w == t . g */
  double t[N], t_out[N], w[N], g[N];
  for (int i = 0; i < N; i++) {
    v[i] = x0[i];
    t[i] = t_out[i] = rnd(i + 1);
    g[i] = w[i] = rnd(N + 1 + i);
  }
  double jr = __enzyme_fwddiff((void *)memory_calls, enzyme_dup, v, t_out, enzyme_const, N);
  for (int i = 0; i < N; i++) v[i] = x0[i];
  __enzyme_autodiff((void *)memory_calls, enzyme_dup, v, g, enzyme_const, N);
  check("dot_memory_calls", jr + dotp(t_out, w, N), dotp(t, g, N));
  /* vector forward mode: scalar_calls with 4 tangents; memory_calls (x updated in place, so on
     a fresh copy for every call) with 2 shadow arrays by dup and then by dupv: the returned
     tangents and the updated shadows of each lane versus a width-1 call */
  V4 s4 = __enzyme_fwddiff4((void *)scalar_calls, enzyme_width, 4, x, rnd(1), rnd(2), rnd(3), rnd(4));
  for (int k = 0; k < 4; k++) checkv("scalar_calls", k, -1, s4.d[k], __enzyme_fwddiff((void *)scalar_calls, x, rnd(1 + k)));
  for (int dupv = 0; dupv < 2; dupv++) {
    double t2[2][N], t1[N];
    for (int k = 0; k < 2; k++)
      for (int i = 0; i < N; i++) t2[k][i] = rnd(20 + N * k + i);
    for (int i = 0; i < N; i++) v[i] = x0[i];
    V2 r2 = dupv ? __enzyme_fwddiff2((void *)memory_calls, enzyme_width, 2, enzyme_dupv, sizeof t2[0], v, t2,
                                     enzyme_const, N)
                 : __enzyme_fwddiff2((void *)memory_calls, enzyme_width, 2, enzyme_dup, v, t2[0], t2[1],
                                     enzyme_const, N);
    for (int k = 0; k < 2; k++) {
      for (int i = 0; i < N; i++) v[i] = x0[i], t1[i] = rnd(20 + N * k + i);
      checkv(dupv ? "memory_calls_dupv" : "memory_calls", k, -1, r2.d[k],
             __enzyme_fwddiff((void *)memory_calls, enzyme_dup, v, t1, enzyme_const, N));
      for (int i = 0; i < N; i++) checkv(dupv ? "memory_calls_dupv" : "memory_calls", k, i, t2[k][i], t1[i]);
    }
  }
  return report();
}
