/* enzyme_dupnoneed: the primal output buffer's value is not needed, only the gradient of the
   inputs; and a function that both returns a value and writes an output (both seeded). */
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
int enzyme_dup, enzyme_dupnoneed, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random direction entries */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

void squares(double *out, const double *x, int n) {
  for (int i = 0; i < n; i++) out[i] = x[i] * x[i] * 0.5 + sin(x[i]);
}

/* writes out[i] = x_i^2 and returns sum x_i */
double both(double *out, const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    out[i] = x[i] * x[i];
    s += x[i];
  }
  return s;
}

/* reads back what it wrote: the primal writes must stay (needed reads) */
void square_twice(double *out, const double *x, int n) {
  for (int i = 0; i < n; i++) {
    out[i] = x[i] * x[i];
    out[i] = out[i] * out[i];
  }
}

int main(void) {
  enum { N = 4 };
  double x[N] = {0.5, -1, 2, 1.5}, dx[N] = {0}, out[N], dout[N];
  for (int i = 0; i < N; i++) dout[i] = i + 1;
  __enzyme_autodiff((void *)squares, enzyme_dupnoneed, out, dout, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("dupnoneed_dx", i, dx[i], (i + 1) * (x[i] + cos(x[i])));

  /* reverse mode never writes (or reads) a dupnoneed primal nobody reads back: Enzyme's
     sparse examples pass (double *)0x1 */
  for (int i = 0; i < N; i++) { dx[i] = 0; dout[i] = i + 1; }
  __enzyme_autodiff((void *)squares, enzyme_dupnoneed, (double *)0x1, dout, enzyme_dup, x, dx,
                    enzyme_const, N);
  for (int i = 0; i < N; i++) checki("dupnoneed_0x1_dx", i, dx[i], (i + 1) * (x[i] + cos(x[i])));
  for (int i = 0; i < N; i++) { dx[i] = 0; dout[i] = i + 1; }
  __enzyme_autodiff((void *)square_twice, enzyme_dupnoneed, out, dout, enzyme_dup, x, dx,
                    enzyme_const, N);
  for (int i = 0; i < N; i++)
    checki("dupnoneed_readback_dx", i, dx[i], (i + 1) * 4 * x[i] * x[i] * x[i]);

  for (int i = 0; i < N; i++) { dx[i] = 0; dout[i] = 0.5 * i; }
  __enzyme_autodiff((void *)both, enzyme_dup, out, dout, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) checki("both_dx", i, dx[i], 1 + 0.5 * i * 2 * x[i]);
  for (int i = 0; i < N; i++) checki("both_out", i, out[i], x[i] * x[i]);

  /* forward/reverse dot test with a direction v on x and a weight w on the outputs:
     (J v) . w from forward mode equals v . (J^T w) from reverse mode */
  double v[N], w[N], jv[N], vjw = 0, jvw = 0;
  for (int i = 0; i < N; i++) { v[i] = rnd(i); w[i] = rnd(N + i); jv[i] = 0; dx[i] = 0; dout[i] = w[i]; }
  __enzyme_fwddiff((void *)squares, enzyme_dupnoneed, out, jv, enzyme_dup, x, v, enzyme_const, N);
  __enzyme_autodiff((void *)squares, enzyme_dupnoneed, out, dout, enzyme_dup, x, dx, enzyme_const, N);
  for (int i = 0; i < N; i++) { jvw += jv[i] * w[i]; vjw += v[i] * dx[i]; }
  check("dot_squares", jvw, vjw);
  /* both(): outputs out[] and the return value (weight wr); reverse seeds the return with 1, so
     seed out with w / wr and scale the input adjoint by wr */
  double wr = rnd(2 * N);
  for (int i = 0; i < N; i++) { jv[i] = 0; dx[i] = 0; dout[i] = w[i] / wr; }
  double jvr = __enzyme_fwddiff((void *)both, enzyme_dup, out, jv, enzyme_dup, x, v, enzyme_const, N);
  __enzyme_autodiff((void *)both, enzyme_dup, out, dout, enzyme_dup, x, dx, enzyme_const, N);
  jvw = jvr * wr;
  vjw = 0;
  for (int i = 0; i < N; i++) { jvw += jv[i] * w[i]; vjw += v[i] * dx[i] * wr; }
  check("dot_both", jvw, vjw);
  return report();
}
