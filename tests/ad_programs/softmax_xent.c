/* Softmax cross-entropy in three consecutive loops over the same bound (max, sum of exp,
   loss): d loss / d z_i = softmax_i - [i == label]. */
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
int enzyme_dup, enzyme_const, enzyme_width;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
typedef struct { double d[4]; } V4;
V4 __enzyme_fwddiff4(void *, ...) __asm__("__enzyme_fwddiff");
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }
static double dotp(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

double xent(const double *z, int n, int label) {
  double m = z[0];
  for (int i = 1; i < n; i++) m = z[i] > m ? z[i] : m;
  double s = 0;
  for (int i = 0; i < n; i++) s += exp(z[i] - m);
  return log(s) + m - z[label];
}

int main(void) {
  enum { N = 5 };
  double z[N] = {0.5, 2.0, -1.0, 1.2, 0.1}, dz[N] = {0};
  __enzyme_autodiff((void *)xent, enzyme_dup, z, dz, enzyme_const, N, enzyme_const, 3);
  double s = 0;
  for (int i = 0; i < N; i++) s += exp(z[i]);
  for (int i = 0; i < N; i++) checki("dz", i, dz[i], exp(z[i]) / s - (i == 3));
  double v[N];   /* forward J.v versus v . (reverse gradient) */
  for (int i = 0; i < N; i++) v[i] = rnd(i);
  check("dot_xent",
        __enzyme_fwddiff((void *)xent, enzyme_dup, z, v, enzyme_const, N, enzyme_const, 3),
        dotp(v, dz, N));
  /* vector forward mode: 4 directions (dup, 4 shadow arrays) versus 4 width-1 calls */
  double v4[4][N];
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < N; i++) v4[k][i] = rnd(N + k * N + i);
  for (int label = 0; label < N; label += 3) {
    V4 t = __enzyme_fwddiff4((void *)xent, enzyme_width, 4, enzyme_dup, z, v4[0], v4[1], v4[2], v4[3],
                             enzyme_const, N, enzyme_const, label);
    for (int k = 0; k < 4; k++)
      checkv(label ? "xent3" : "xent0", k, -1, t.d[k],
             __enzyme_fwddiff((void *)xent, enzyme_dup, z, v4[k], enzyme_const, N, enzyme_const, label));
  }
  return report();
}
