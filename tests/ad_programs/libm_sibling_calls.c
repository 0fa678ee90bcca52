/* Derivative formulas that call a function the primal also calls on the same operand: sin's
   partial is cos(x), cos's is -sin(x). Where the code computes both (a rotation), the derivative
   reads the primal's value instead of calling again (rules/calls.py, sibling_calls). Cases: the
   pair in one block in both orders; in a loop; cos only on one branch (it does not run on every
   path to sin, so it must not be used); the same function on a different operand (x vs y);
   float versions; a value of the pair overwritten later in a loop (the reverse must read the
   value of its own iteration). Reverse mode against central differences, forward mode against
   reverse mode. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
float __enzyme_fwddiff_f(void *, ...) __asm__("__enzyme_fwddiff");
typedef struct { double x, a, b; } R3;
typedef struct { double x, a; } R2;
typedef struct { float x, a; } RF;
R3 ad3(void *, ...) __asm__("__enzyme_autodiff");
R2 ad2(void *, ...) __asm__("__enzyme_autodiff");
RF adf(void *, ...) __asm__("__enzyme_autodiff");

/* a 2-D rotation of (a, b) by x: sin and cos of one angle, cos first */
double rot(double x, double a, double b) {
  double c = cos(x), s = sin(x);
  double u = c * a - s * b, v = s * a + c * b;
  return u * u * v + 3 * v;
}
/* sin first, then cos */
double rot2(double x, double a) {
  double s = sin(x);
  double c = cos(x);
  return s * s * a + c * a * a + s / (2 + c);
}
/* cos only on one branch: sin's partial must call cos itself */
double branch(double x, double a) {
  double t = 0;
  if (a > 0.5)
    t = cos(x) * a;
  return t + sin(x) * sin(x);
}
/* sin(x) and cos(y) are no pair */
double other(double x, double y) {
  return sin(x) * cos(y) + cos(x + y);
}
float rotf(float x, float a) {
  float c = cosf(x), s = sinf(x);
  return c * s * a + s * a * a;
}
/* angles accumulate in a loop: each iteration's pair has its own values */
double chain(const double *th, int n) {
  double px = 1, py = 0.5, acc = 0;
  for (int i = 0; i < n; i++) {
    double ang = th[i] + 0.1 * acc;
    double c = cos(ang), s = sin(ang);
    double qx = c * px - s * py, qy = s * px + c * py;
    px = qx; py = qy;
    acc += qx * qy;
  }
  return acc + px;
}

static double fd(double (*f)(const double *, int), double *v, int n, int k) {
  double h = 1e-6, old = v[k], fp, fm;
  v[k] = old + h; fp = f(v, n);
  v[k] = old - h; fm = f(v, n);
  v[k] = old;
  return (fp - fm) / (2 * h);
}
static double e_rot(const double *v, int n) { (void)n; return rot(v[0], v[1], v[2]); }
static double e_rot2(const double *v, int n) { (void)n; return rot2(v[0], v[1]); }
static double e_branch(const double *v, int n) { (void)n; return branch(v[0], v[1]); }
static double e_other(const double *v, int n) { (void)n; return other(v[0], v[1]); }

int main(void) {
  double v[3] = {0.7, 1.3, -0.4};
  /* rot: all three arguments active */
  {
    R3 g = ad3((void *)rot, v[0], v[1], v[2]);
    check("rot_dx", g.x, fd(e_rot, v, 3, 0), 1e-6);
    check("rot_da", g.a, fd(e_rot, v, 3, 1), 1e-6);
    check("rot_db", g.b, fd(e_rot, v, 3, 2), 1e-6);
    double t = __enzyme_fwddiff((void *)rot, v[0], 0.3, v[1], -0.2, v[2], 0.5);
    check("rot_fwd", t, 0.3 * g.x - 0.2 * g.a + 0.5 * g.b, 1e-9);
  }
  double pts[2][2] = {{0.7, 1.3}, {0.9, 0.2}};       /* branch taken, not taken */
  /* one expansion per function: __enzyme_autodiff needs the function at compile time */
#define TWO(fn)                                                                  \
  for (int p = 0; p < 2; p++) {                                                  \
    double w[2] = {pts[p][0], pts[p][1]};                                        \
    R2 g = ad2((void *)fn, w[0], w[1]);                                          \
    char nm[64];                                                                 \
    snprintf(nm, sizeof nm, #fn "_%d_dx", p);                                    \
    check(nm, g.x, fd(e_##fn, w, 2, 0), 1e-6);                                   \
    snprintf(nm, sizeof nm, #fn "_%d_da", p);                                    \
    check(nm, g.a, fd(e_##fn, w, 2, 1), 1e-6);                                   \
    double t = __enzyme_fwddiff((void *)fn, w[0], 0.6, w[1], -1.1);              \
    snprintf(nm, sizeof nm, #fn "_%d_fwd", p);                                   \
    check(nm, t, 0.6 * g.x - 1.1 * g.a, 1e-9);                                   \
  }
  TWO(rot2)
  TWO(branch)
  TWO(other)
  {
    float x = 0.7f, a = 1.3f;
    RF g = adf((void *)rotf, x, a);
    double c = cos(x), sn = sin(x);         /* analytic: float differences are too coarse */
    check("rotf_dx", g.x, a * (c * c - sn * sn) + c * a * a, 1e-5);
    check("rotf_da", g.a, c * sn + 2 * sn * a, 1e-5);
    float t = __enzyme_fwddiff_f((void *)rotf, x, 1.0f, a, 0.0f);
    check("rotf_fwd", t, g.x, 1e-5);
  }
  {
    enum { N = 9 };
    double th[N], dth[N] = {0}, tv[N], s = 0;
    for (int i = 0; i < N; i++) { th[i] = 0.3 + 0.2 * sin(1.0 + i); tv[i] = cos(0.5 * i); }
    __enzyme_autodiff((void *)chain, enzyme_dup, th, dth, enzyme_const, N);
    for (int i = 0; i < N; i++) {
      char nm[32];
      snprintf(nm, sizeof nm, "chain_d%d", i);
      check(nm, dth[i], fd(chain, th, N, i), 1e-6);
      s += tv[i] * dth[i];
    }
    double t = __enzyme_fwddiff((void *)chain, enzyme_dup, th, tv, enzyme_const, N);
    check("chain_fwd", t, s, 1e-9);
  }
  return failed != 0;
}
