/* Paper Figure 1: norm() normalizes a vector by mag(), which is loop invariant (LICM hoists it
   before AD). Checks the full Jacobian d out[k] / d in[j] = delta_kj / m - in_k in_j / m^3. */
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
#define N 5
int enzyme_dup, enzyme_const, enzyme_width, enzyme_dupv;
void __enzyme_autodiff(void *, ...);
void __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random direction entries */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

static double mag(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return sqrt(s);
}

void norm(double *out, const double *in, int n) {
  for (int i = 0; i < n; i++) out[i] = in[i] / mag(in, n);
}

int main(void) {
  double in[N] = {1, -2, 3, 0.5, 4}, out[N];
  double m = mag(in, N);
  for (int k = 0; k < N; k++) {
    double d_in[N] = {0}, d_out[N] = {0};
    d_out[k] = 1;
    __enzyme_autodiff((void *)norm, enzyme_dup, out, d_out, enzyme_dup, in, d_in, enzyme_const, N);
    for (int j = 0; j < N; j++) {
      char name[32];
      snprintf(name, sizeof name, "dout%d_din%d", k, j);
      check(name, d_in[j], (k == j) / m - in[k] * in[j] / (m * m * m));
    }
    checki("out", k, out[k], in[k] / m);
  }
  /* forward/reverse dot test with a direction v on in and a weight w on out:
     (J v) . w from forward mode equals v . (J^T w) from reverse mode */
  double v[N], w[N], jv[N] = {0}, d_in[N] = {0}, d_out[N], jvw = 0, vjw = 0;
  for (int i = 0; i < N; i++) { v[i] = rnd(i); w[i] = d_out[i] = rnd(N + i); }
  __enzyme_fwddiff((void *)norm, enzyme_dup, out, jv, enzyme_dup, in, v, enzyme_const, N);
  __enzyme_autodiff((void *)norm, enzyme_dup, out, d_out, enzyme_dup, in, d_in, enzyme_const, N);
  for (int i = 0; i < N; i++) { jvw += jv[i] * w[i]; vjw += v[i] * d_in[i]; }
  check("dot_norm", jvw, vjw);
  /* vector forward mode: 4 directions, out by dup (4 shadows), in by dupv; every output
     tangent of each lane versus a width-1 call along that direction */
  double v4[4][N], jv4[4][N], jv1[N];
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < N; i++) v4[k][i] = rnd(2 * N + k * N + i);
  __enzyme_fwddiff((void *)norm, enzyme_width, 4, enzyme_dup, out, jv4[0], jv4[1], jv4[2], jv4[3],
                   enzyme_dupv, sizeof v4[0], in, v4, enzyme_const, N);
  for (int k = 0; k < 4; k++) {
    __enzyme_fwddiff((void *)norm, enzyme_dup, out, jv1, enzyme_dup, in, v4[k], enzyme_const, N);
    for (int i = 0; i < N; i++) checkv("norm", k, i, jv4[k][i], jv1[i]);
  }
  return report();
}
