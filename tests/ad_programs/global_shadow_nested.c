/* Second derivatives through globals: a function that calls a derivative with a context of its
   own (__enzyme_context inside it) differentiated again, in forward and in reverse mode, with
   the outer derivative's global shadows in another context (nested contexts). Also a Hessian
   through a global the function writes, without any context. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
typedef struct { double d[2]; } V2;
extern int enzyme_context;
void *__enzyme_context(int);
void *__enzyme_shadow(void *, void *, int);
void __enzyme_zero_shadows(void *);
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
V2 __enzyme_fwddiff2(void *, ...) __asm__("__enzyme_fwddiff");

double g = 2.0;
double w[2] = {1.5, -0.5};

double f(double x) { return g * x * x * x + g * w[0] * sin(x) + w[1] * x * x; }

/* df/dx by reverse mode, in a context made here (its shadow of g zeroed first) */
double df(double x) {
  void *inner = __enzyme_context(1);
  *(double *)__enzyme_shadow(inner, &g, 0) = 0.0;
  return __enzyme_autodiff((void *)f, enzyme_context, inner, x);
}

/* df/dg by forward mode: a fresh context seeded with dg = 1 */
double dfdg(double x) {
  void *tan = __enzyme_context(1);
  __enzyme_zero_shadows(tan);
  *(double *)__enzyme_shadow(tan, &g, 0) = 1.0;
  return __enzyme_fwddiff((void *)f, enzyme_context, tan, x, 0.0);
}

/* df/dx by reverse mode on the default shadows (no context) */
double df_default(double x) { return __enzyme_autodiff((void *)f, x); }

/* a Hessian through a global the function writes (no context anywhere in these two) */
double s = 0;
double h(double x) {
  s = g * x;
  return s * x * x;
}
double dh(double x) { return __enzyme_autodiff((void *)h, x); }

static void seed(void *ctx, int lane, double dg, double dw0, double dw1) {
  *(double *)__enzyme_shadow(ctx, &g, lane) = dg;
  ((double *)__enzyme_shadow(ctx, &w, lane))[0] = dw0;
  ((double *)__enzyme_shadow(ctx, &w, lane))[1] = dw1;
}

int main(void) {
  const double x = 0.7, G = g, W0 = w[0], W1 = w[1];
  const double fxx = 6 * G * x - G * W0 * sin(x) + 2 * W1;   /* d2f/dx2 */
  const double fxg = 3 * x * x + W0 * cos(x);                /* d2f/dxdg */
  const double fxw0 = G * cos(x), fxw1 = 2 * x;              /* d2f/dxdw */
  check("df", df(x), 3 * G * x * x + G * W0 * cos(x) + 2 * W1 * x);

  /* forward over reverse, the outer tangents of the globals in a context */
  void *outer = __enzyme_context(1);
  seed(outer, 0, 0, 0, 0);
  check("fwd_rev_xx", __enzyme_fwddiff((void *)df, enzyme_context, outer, x, 1.0), fxx);
  seed(outer, 0, 1, 0, 0);
  check("fwd_rev_xg", __enzyme_fwddiff((void *)df, enzyme_context, outer, x, 0.0), fxg);
  const double v[4] = {0.3, -1.1, 0.8, 0.45};     /* direction in (x, g, w0, w1) */
  seed(outer, 0, v[1], v[2], v[3]);
  double jv = __enzyme_fwddiff((void *)df, enzyme_context, outer, x, v[0]);
  check("fwd_rev_dir", jv, fxx * v[0] + fxg * v[1] + fxw0 * v[2] + fxw1 * v[3]);

  /* reverse over reverse: the outer adjoints of the globals accumulate in a context */
  void *adj = __enzyme_context(1);
  __enzyme_zero_shadows(adj);
  double dxx = __enzyme_autodiff((void *)df, enzyme_context, adj, x);
  double gg = *(double *)__enzyme_shadow(adj, &g, 0);
  double gw0 = ((double *)__enzyme_shadow(adj, &w, 0))[0];
  double gw1 = ((double *)__enzyme_shadow(adj, &w, 0))[1];
  check("rev_rev_xx", dxx, fxx);
  check("rev_rev_xg", gg, fxg);
  check("rev_rev_xw0", gw0, fxw0);
  check("rev_rev_xw1", gw1, fxw1);
  /* dot-product test: forward J v against v . reverse gradient */
  check("dot_fwd_rev", jv, v[0] * dxx + v[1] * gg + v[2] * gw0 + v[3] * gw1);
  __enzyme_zero_shadows(adj);   /* a second gradient starts from zero again */
  check("rev_rev_again", __enzyme_autodiff((void *)df, enzyme_context, adj, x), fxx);
  check("rev_rev_again_xg", *(double *)__enzyme_shadow(adj, &g, 0), fxg);

  /* two directions at once: an outer context of width 2 */
  void *outer2 = __enzyme_context(2);
  seed(outer2, 0, 0, 0, 0);
  seed(outer2, 1, 1, 0, 0);
  V2 t2 = __enzyme_fwddiff2((void *)df, enzyme_context, outer2, x, 1.0, 0.0);
  check("fwd2_rev_xx", t2.d[0], fxx);
  check("fwd2_rev_xg", t2.d[1], fxg);

  /* forward over forward: d/dx of df/dg, and d/dg of it */
  seed(outer, 0, 0, 0, 0);
  check("fwd_fwd_gx", __enzyme_fwddiff((void *)dfdg, enzyme_context, outer, x, 1.0), fxg);
  seed(outer, 0, 0, 1, 0);
  check("fwd_fwd_gw0", __enzyme_fwddiff((void *)dfdg, enzyme_context, outer, x, 0.0), sin(x));
  __enzyme_zero_shadows(adj);
  check("rev_fwd_gx", __enzyme_autodiff((void *)dfdg, enzyme_context, adj, x), fxg);
  check("rev_fwd_gw0", ((double *)__enzyme_shadow(adj, &w, 0))[0], sin(x));

  /* the inner derivative on the default shadows, the outer one in a context */
  seed(outer, 0, 1, 0, 0);
  check("fwd_default_xg", __enzyme_fwddiff((void *)df_default, enzyme_context, outer, x, 0.0), fxg);
  seed(outer, 0, 0, 0, 0);
  check("fwd_default_xx", __enzyme_fwddiff((void *)df_default, enzyme_context, outer, x, 1.0), fxx);

  /* no contexts: h = g x^3 through the global s, d2h/dx2 = 6 g x */
  check("hessian_written_global_fwd", __enzyme_fwddiff((void *)dh, x, 1.0), 6 * G * x);
  check("hessian_written_global_rev", __enzyme_autodiff((void *)dh, x), 6 * G * x);
  return report();
}
