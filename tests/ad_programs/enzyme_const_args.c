/* enzyme_const on scalars and on pointers (no shadow passed), explicit enzyme_out. */
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
typedef struct { double d0, d1; } D2;
int enzyme_dup, enzyme_const, enzyme_out;
double __enzyme_autodiff(void *, ...);
D2 __enzyme_autodiff2(void *, ...);
double __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random direction entries */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

double f(double x, double y) { return x * x * y + exp(y); }

/* weights are constant, data active */
double weighted(const double *w, const double *x, double scale, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += w[i] * x[i] * x[i];
  return s * scale;
}

int main(void) {
  double x = 1.5, y = 0.5;
  check("dx_y_const", __enzyme_autodiff((void *)f, x, enzyme_const, y), 2 * x * y);
  check("dy_x_const", __enzyme_autodiff((void *)f, enzyme_const, x, y), x * x + exp(y));
  D2 g = __enzyme_autodiff2((void *)f, enzyme_out, x, enzyme_out, y);
  check("out_dx", g.d0, 2 * x * y);
  check("out_dy", g.d1, x * x + exp(y));

  double w[3] = {1, 2, 3}, v[3] = {0.5, -1, 2}, dv[3] = {0};
  double dscale = __enzyme_autodiff((void *)weighted, enzyme_const, w, enzyme_dup, v, dv,
                                    enzyme_out, 2.0, enzyme_const, 3);
  for (int i = 0; i < 3; i++) checki("weighted_dv", i, dv[i], 2.0 * 2 * w[i] * v[i]);
  check("weighted_dscale", dscale, w[0] * 0.25 + w[1] * 1 + w[2] * 4);

  /* forward/reverse dot test: the tangent along a direction equals direction . gradient */
  double vx = rnd(0), vy = rnd(1), vscale = rnd(2), tv[3], vg = vscale * dscale;
  check("dot_f", __enzyme_fwddiff((void *)f, x, vx, y, vy), vx * g.d0 + vy * g.d1);
  check("dot_f_y_const", __enzyme_fwddiff((void *)f, x, vx, enzyme_const, y), vx * g.d0);
  for (int i = 0; i < 3; i++) { tv[i] = rnd(3 + i); vg += tv[i] * dv[i]; }
  check("dot_weighted", __enzyme_fwddiff((void *)weighted, enzyme_const, w, enzyme_dup, v, tv, 2.0, vscale,
                                         enzyme_const, 3), vg);
  return report();
}
