/* a*b+c, which clang contracts into llvm.fmuladd at -O2, in a Horner loop and on array slots. */
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
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random direction entries */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

double muladd(const double *v) { return v[0] * v[1] + v[2]; }

/* p(x) = sum c_k x^k by Horner: r = r*x + c_k */
double horner(double x, const double *c, int n) {
  double r = 0;
  for (int k = n - 1; k >= 0; k--) r = r * x + c[k];
  return r;
}

int main(void) {
  double v[3] = {1.5, -2, 0.25}, dv[3] = {0};
  __enzyme_autodiff((void *)muladd, v, dv);
  check("dv0", dv[0], v[1]);
  check("dv1", dv[1], v[0]);
  check("dv2", dv[2], 1.0);

  double c[5] = {1, -2, 0.5, 3, -1}, x = 0.7;
  double want = 0;
  for (int k = 1; k < 5; k++) want += k * c[k] * pow(x, k - 1);
  check("horner_dx", __enzyme_autodiff((void *)horner, x, enzyme_const, c, enzyme_const, 5), want);

  /* gradient with respect to the coefficients: d/dc_k = x^k */
  double dc[5] = {0};
  __enzyme_autodiff((void *)horner, enzyme_const, x, enzyme_dup, c, dc, enzyme_const, 5);
  for (int k = 0; k < 5; k++) checki("horner_dc", k, dc[k], pow(x, k));

  /* forward/reverse dot test: the tangent along a direction equals direction . gradient */
  double t[5], vx = rnd(5), tdv = 0, tdc = vx * want;
  for (int k = 0; k < 5; k++) { t[k] = rnd(k); tdc += t[k] * dc[k]; tdv += k < 3 ? t[k] * dv[k] : 0; }
  check("dot_muladd", __enzyme_fwddiff((void *)muladd, v, t), tdv);
  check("dot_horner", __enzyme_fwddiff((void *)horner, x, vx, enzyme_dup, c, t, enzyme_const, 5), tdc);
  return report();
}
