/* Math library calls that return float results through pointers: modf (the fraction returned,
   the integral part stored; clang emits llvm.modf for it, the library call stays one under
   no_builtin), modff, sincos and sincosf (both results stored; llvm.sincos under
   -fno-math-errno, which tests/test_modes.py builds this program with), into locals and into an
   array with a shadow. The out-pointer memory is overwritten later while the earlier value is
   used nonlinearly (the reverse sweep must not reload it), also for frexp's, remquo's and
   lgamma_r's integer out-parameters. Reverse mode against central differences, forward mode
   against reverse mode (dot products), vector forward mode (enzyme_width 2) against width 1. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const, enzyme_width;
double __enzyme_autodiff(void *, ...);
float __enzyme_autodiff_f(void *, ...) __asm__("__enzyme_autodiff");
double __enzyme_fwddiff(void *, ...);
float __enzyme_fwddiff_f(void *, ...) __asm__("__enzyme_fwddiff");
typedef struct { double d[2]; } T2;
typedef struct { double dx, dy; } G;
G ad2(void *, ...) __asm__("__enzyme_autodiff");
T2 __enzyme_fwddiff_t2(void *, ...) __asm__("__enzyme_fwddiff");

/* scalar cases: a local receives the results */
double f_modf(double x) {
  double ip;
  double fr = modf(x, &ip);
  return fr * fr * ip + sin(fr) * x;
}
__attribute__((no_builtin("modf"))) double f_modf_lib(double x) {
  double ip;
  double fr = modf(x, &ip);
  return fr * fr * ip + fr * x;
}
float f_modff(float x) {
  float ip;
  float fr = modff(x, &ip);
  return fr * fr * ip + fr;
}
double f_sincos(double x) {
  double s, c;
  sincos(x, &s, &c);
  return s * c + s * s * x;
}
float f_sincosf(float x) {
  float s, c;
  sincosf(x, &s, &c);
  return s * c * x + c;
}

/* the out-pointer memory is written again after its first value was used nonlinearly */
double reuse(double x, double y) {
  double s, c, ip;
  sincos(x, &s, &c);
  double a = s * s + c * x;
  sincos(a * y, &s, &c);
  double b = s * c * a;
  double fr = modf(4.0 * b + x, &ip);
  double k = fr * fr * ip;
  fr = modf(3.0 * y * fr + 2.5, &ip);
  return b * s + k * fr * ip + a * c;
}
double loop_reuse(const double *x, int n) {
  double s = 0.1, c = 1.0, acc = 0.0;
  for (int i = 0; i < n; i++) {
    sincos(x[i] + s * c, &s, &c);   /* reads the previous pair, then overwrites it */
    acc += s * s * c;
  }
  return acc;
}
double int_reuse(double x, double y) {
  int e, q, sg;
  double m = frexp(x * 5.3, &e);
  double a = m * m * e;
  double m2 = frexp(y * 9.0 + a, &e);
  double r = remquo(x * 7.0, 0.65, &q);
  double b = r * r * (q & 7);   /* (only 3 bits are portable) */
  double r2 = remquo(y * 5.0 + b, 0.3, &q);
  double g = lgamma_r(x + 0.5, &sg);
  double l = g * g * sg;
  double g2 = lgamma_r(-y - 0.5, &sg);
  return a * m2 * e + b * r2 * (q & 7) + l * g2 * sg;
}

/* out-pointers into the caller's memory (no lifetime markers), rewritten in every iteration:
   the reverse sweep must read each iteration's values, not reload the last ones (modf stays a
   call: as llvm.modf plus a plain store, the store alone would keep every load taped) */
__attribute__((no_builtin("modf"))) double loop_args(const double *x, double *sc, int *ie, int n) {
  double acc = 0;
  for (int i = 0; i < n; i++) {
    sincos(x[i], &sc[0], &sc[1]);
    double fr = modf(4.0 * x[i] + 10.3, &sc[2]);
    double m = frexp(x[i] * 3.0, &ie[0]);
    double r = remquo(2.0 * x[i] * x[i] + 0.3, 0.65, &ie[1]);
    double g = lgamma_r(x[i] + 3.0, &ie[2]);
    acc += sc[0] * sc[0] * sc[1] + fr * fr * sc[2] + m * m * ie[0] + r * r * (ie[1] & 7) +
           g * g * ie[2];
  }
  return acc;
}

/* into an array with a shadow: out[3i], out[3i+1] = sin, cos of x[i]; then out[3i] is replaced
   by a fraction and out[3i+2] receives the integral part (no derivative) */
void arr(const double *x, double *out, int n) {
  for (int i = 0; i < n; i++) {
    sincos(x[i], &out[3 * i], &out[3 * i + 1]);
    out[3 * i] = modf(3.0 * out[3 * i] * x[i] + 5.0, &out[3 * i + 2]);
  }
}

enum { N = 4, NO = 3 * N };
static double w[NO];
static double arr_loss(double *x) {
  double out[NO], l = 0;
  arr(x, out, N);
  for (int k = 0; k < NO; k++) l += w[k] * out[k];
  return l;
}
static double fd1(double (*f)(double), double x) {
  double h = 1e-6;
  return (f(x + h) - f(x - h)) / (2 * h);
}
/* analytic derivatives of the float cases (finite differences in float are too coarse) */
static double d_modff(double x) { return 2.0 * (x - trunc(x)) * trunc(x) + 1.0; }
static double d_sincosf(double x) { return cos(2.0 * x) * x + sin(x) * cos(x) - sin(x); }

int main(void) {
  char nm[64];
  /* scalars: reverse vs finite differences, forward vs reverse, vector forward */
  double xs[] = {2.3, -1.35, 0.7};
#define SCALAR(F)                                                                   \
  for (int j = 0; j < 3; j++) {                                                     \
    double x = xs[j];                                                               \
    double r = __enzyme_autodiff((void *)F, x);                                     \
    snprintf(nm, sizeof nm, #F "_rev_%d", j);                                       \
    check(nm, r, fd1(F, x), 1e-6);                                                  \
    snprintf(nm, sizeof nm, #F "_fwd_%d", j);                                       \
    check(nm, __enzyme_fwddiff((void *)F, x, 1.0), r, 1e-12);                       \
    T2 t = __enzyme_fwddiff_t2((void *)F, enzyme_width, 2, x, 1.0, -2.5);           \
    snprintf(nm, sizeof nm, #F "_w2_%d", j);                                        \
    check(nm, t.d[0], r, 1e-12);                                                    \
    check(nm, t.d[1], -2.5 * r, 1e-12);                                             \
  }
  SCALAR(f_modf)
  SCALAR(f_modf_lib)
  SCALAR(f_sincos)
#define SCALARF(F)                                                                  \
  for (int j = 0; j < 3; j++) {                                                     \
    float x = (float)xs[j];                                                         \
    float r = __enzyme_autodiff_f((void *)f_##F, x);                                \
    snprintf(nm, sizeof nm, #F "_rev_%d", j);                                       \
    check(nm, r, d_##F(x), 1e-5);                                                   \
    snprintf(nm, sizeof nm, #F "_fwd_%d", j);                                       \
    check(nm, __enzyme_fwddiff_f((void *)f_##F, x, 1.0f), r, 1e-6);                 \
  }
  SCALARF(modff)
  SCALARF(sincosf)

  /* reused out-pointer memory */
  {
    double x = 0.8, y = 1.3, h = 1e-6;
    double dxy[2] = {0, 0};
    G g = ad2((void *)reuse, x, y);
    check("reuse_dx", g.dx, (reuse(x + h, y) - reuse(x - h, y)) / (2 * h), 1e-6);
    check("reuse_dy", g.dy, (reuse(x, y + h) - reuse(x, y - h)) / (2 * h), 1e-6);
    dxy[0] = 0.3, dxy[1] = -0.7;
    check("reuse_dot", __enzyme_fwddiff((void *)reuse, x, dxy[0], y, dxy[1]),
          g.dx * dxy[0] + g.dy * dxy[1], 1e-10);
    G gi = ad2((void *)int_reuse, x, y);
    check("int_reuse_dx", gi.dx, (int_reuse(x + h, y) - int_reuse(x - h, y)) / (2 * h), 1e-6);
    check("int_reuse_dy", gi.dy, (int_reuse(x, y + h) - int_reuse(x, y - h)) / (2 * h), 1e-6);
    check("int_reuse_dot", __enzyme_fwddiff((void *)int_reuse, x, dxy[0], y, dxy[1]),
          gi.dx * dxy[0] + gi.dy * dxy[1], 1e-10);
  }
  {
    double x[N] = {0.3, 1.1, -0.6, 2.0}, dx[N] = {0}, v[N], h = 1e-6, dot = 0;
    __enzyme_autodiff((void *)loop_reuse, enzyme_dup, x, dx, enzyme_const, N);
    for (int i = 0; i < N; i++) {
      double k = x[i];
      x[i] = k + h;
      double fp = loop_reuse(x, N);
      x[i] = k - h;
      double fm = loop_reuse(x, N);
      x[i] = k;
      snprintf(nm, sizeof nm, "loop_reuse_dx%d", i);
      check(nm, dx[i], (fp - fm) / (2 * h), 1e-6);
      v[i] = cos(1.0 + i);
      dot += v[i] * dx[i];
    }
    check("loop_reuse_dot", __enzyme_fwddiff((void *)loop_reuse, enzyme_dup, x, v, enzyme_const, N),
          dot, 1e-10);
  }

  {
    /* the seeds in dsc are adjoints of sc's final values (the last iteration's) */
    double x[N] = {0.3, 1.1, -0.6, 2.0}, dx[N] = {0}, v[N], sc[3], seed[3] = {1, 2, 3};
    double dsc[3] = {1, 2, 3}, h = 1e-6, dot = 0;
    int ie[3];
    __enzyme_autodiff((void *)loop_args, enzyme_dup, x, dx, enzyme_dup, sc, dsc, enzyme_const,
                      ie, enzyme_const, N);
    check("loop_args_dsc_cleared", fabs(dsc[0]) + fabs(dsc[1]) + fabs(dsc[2]), 0.0, 0);
    for (int i = 0; i < N; i++) {
      double k = x[i], fp, fm;
      x[i] = k + h;
      fp = loop_args(x, sc, ie, N) + seed[0] * sc[0] + seed[1] * sc[1] + seed[2] * sc[2];
      x[i] = k - h;
      fm = loop_args(x, sc, ie, N) + seed[0] * sc[0] + seed[1] * sc[1] + seed[2] * sc[2];
      x[i] = k;
      snprintf(nm, sizeof nm, "loop_args_dx%d", i);
      check(nm, dx[i], (fp - fm) / (2 * h), 1e-6);
      v[i] = cos(3.0 + i);
      dot += v[i] * dx[i];
    }
    double tsc[3] = {5, 5, 5};
    double jv = __enzyme_fwddiff((void *)loop_args, enzyme_dup, x, v, enzyme_dup, sc, tsc,
                                 enzyme_const, ie, enzyme_const, N);
    check("loop_args_ip_tangent", tsc[2], 0.0, 0);
    check("loop_args_dot", jv + seed[0] * tsc[0] + seed[1] * tsc[1], dot, 1e-10);
  }

  /* array outputs with a shadow */
  {
    double x[N] = {0.4, -1.2, 0.9, 2.6}, dx[N] = {0}, out[NO], dout[NO], h = 1e-6;
    for (int k = 0; k < NO; k++) w[k] = 0.5 + 0.25 * k, dout[k] = w[k];
    __enzyme_autodiff((void *)arr, enzyme_dup, x, dx, enzyme_dup, out, dout, enzyme_const, N);
    double left = 0;
    for (int k = 0; k < NO; k++) left += fabs(dout[k]);
    check("arr_dout_cleared", left, 0.0, 0);
    double v[N], dot = 0;
    for (int i = 0; i < N; i++) {
      double k = x[i];
      x[i] = k + h;
      double fp = arr_loss(x);
      x[i] = k - h;
      double fm = arr_loss(x);
      x[i] = k;
      snprintf(nm, sizeof nm, "arr_dx%d", i);
      check(nm, dx[i], (fp - fm) / (2 * h), 1e-6);
      v[i] = sin(2.0 + i);
      dot += v[i] * dx[i];
    }
    /* forward: the shadow starts with garbage, which every call overwrites */
    double tout[NO], tout2[NO], v2[N];
    for (int k = 0; k < NO; k++) tout[k] = 7.0, tout2[k] = -3.0;
    __enzyme_fwddiff((void *)arr, enzyme_dup, x, v, enzyme_dup, out, tout, enzyme_const, N);
    double jv = 0;
    for (int k = 0; k < NO; k++) jv += w[k] * tout[k];
    check("arr_dot", jv, dot, 1e-10);
    for (int i = 0; i < N; i++) {
      snprintf(nm, sizeof nm, "arr_fwd_cos%d", i);
      check(nm, tout[3 * i + 1], -sin(x[i]) * v[i], 1e-12);
      snprintf(nm, sizeof nm, "arr_fwd_ip%d", i);
      check(nm, tout[3 * i + 2], 0.0, 0);
      v2[i] = 2.0 * v[i];
    }
    /* vector forward mode: lane 1 is twice lane 0 */
    double t0[NO], t1[NO];
    for (int k = 0; k < NO; k++) t0[k] = 1.0, t1[k] = 2.0;
    __enzyme_fwddiff((void *)arr, enzyme_width, 2, enzyme_dup, x, v, v2, enzyme_dup, out, t0, t1,
                     enzyme_const, N);
    for (int k = 0; k < NO; k++) {
      snprintf(nm, sizeof nm, "arr_w2_l0_%d", k);
      check(nm, t0[k], tout[k], 1e-12);
      snprintf(nm, sizeof nm, "arr_w2_l1_%d", k);
      check(nm, t1[k], 2.0 * tout[k], 1e-12);
    }
  }
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
