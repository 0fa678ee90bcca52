/* C99 complex functions beyond exp/log/sqrt/sin/cos: csinh, ccosh, ctan, ctanh, cpow, cproj,
   and the float variants of all of them (cexpf, cabsf, cargf, clogf, csqrtf, csinf, ccosf,
   csinhf, ...): libm has no bitcode, and they were refused ("no derivative rule for call to
   'ctanh'"). Each is differentiated through a real function of (x, y) = (Re z, Im z) and
   checked against central differences of the library's own function; ctanh and ctan also at a
   large argument, where a naive formula gives inf / inf. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1.0 + fabs(want));
  printf("CHECK %s %.9g %.9g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
typedef struct { double dx, dy; } D2;
typedef struct { float dx, dy; } F2;
D2 __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
F2 __enzyme_autodiff_f(void *, ...) __asm__("__enzyme_autodiff");
float __enzyme_fwddiff_f(void *, ...) __asm__("__enzyme_fwddiff");

/* mixes real and imaginary parts so that every partial derivative matters */
#define MIX(w) (creal(w) + 0.7 * cimag(w))
#define MIXF(w) (crealf(w) + 0.7f * cimagf(w))
double f_sinh(double x, double y) { return MIX(csinh(x + y * I)); }
double f_cosh(double x, double y) { return MIX(ccosh(x + y * I)); }
double f_tan(double x, double y) { return MIX(ctan(x + y * I)); }
double f_tanh(double x, double y) { return MIX(ctanh(x + y * I)); }
double f_pow(double x, double y) { return MIX(cpow(x + y * I, 1.5 - 0.5 * x * I)); }
double f_proj(double x, double y) { return MIX(cproj(x + y * I)) * x; }
/* each float function beside its double twin, whose central differences are the reference */
#define TWINS(name, expr_f, expr_d) \
  float g_##name(float x, float y) { return expr_f; } \
  double d_##name(double x, double y) { return expr_d; }
TWINS(exp, MIXF(cexpf(x + y * I)), MIX(cexp(x + y * I)))
TWINS(abs, cabsf(x + y * I) + cargf(x + y * I), cabs(x + y * I) + carg(x + y * I))
TWINS(log, MIXF(clogf(x + y * I)), MIX(clog(x + y * I)))
TWINS(sqrt, MIXF(csqrtf(x + y * I)), MIX(csqrt(x + y * I)))
TWINS(sin, MIXF(csinf(x + y * I) + ccosf(x + y * I)), MIX(csin(x + y * I) + ccos(x + y * I)))
TWINS(hyp, MIXF(csinhf(x + y * I) * ccoshf(x + y * I)), MIX(csinh(x + y * I) * ccosh(x + y * I)))
TWINS(tan, MIXF(ctanf(x + y * I) + ctanhf(x + y * I)), MIX(ctan(x + y * I) + ctanh(x + y * I)))
TWINS(pow, MIXF(cpowf(x + y * I, 2.0f + y * I)), MIX(cpow(x + y * I, 2.0 + y * I)))

static void check_d(const char *name, double (*f)(double, double), double x, double y) {
  D2 g = __enzyme_autodiff((void *)f, x, y);
  double h = 1e-6, fx = (f(x + h, y) - f(x - h, y)) / (2 * h), fy = (f(x, y + h) - f(x, y - h)) / (2 * h);
  char n[64];
  snprintf(n, sizeof n, "%s(%g,%g).dx", name, x, y);
  check(n, g.dx, fx, 1e-6);
  snprintf(n, sizeof n, "%s(%g,%g).dy", name, x, y);
  check(n, g.dy, fy, 1e-6);
  snprintf(n, sizeof n, "%s(%g,%g).dot", name, x, y);
  check(n, __enzyme_fwddiff((void *)f, x, 0.3, y, -0.8), 0.3 * g.dx - 0.8 * g.dy, 1e-9);
}

static void check_f(const char *name, float (*f)(float, float), double (*d)(double, double),
                    float x, float y) {
  F2 g = __enzyme_autodiff_f((void *)f, x, y);
  double h = 1e-6, fx = (d(x + h, y) - d(x - h, y)) / (2 * h), fy = (d(x, y + h) - d(x, y - h)) / (2 * h);
  char n[64];
  snprintf(n, sizeof n, "%s(%g,%g).dx", name, x, y);
  check(n, g.dx, fx, 5e-6);
  snprintf(n, sizeof n, "%s(%g,%g).dy", name, x, y);
  check(n, g.dy, fy, 5e-6);
  snprintf(n, sizeof n, "%s(%g,%g).dot", name, x, y);
  check(n, __enzyme_fwddiff_f((void *)f, x, 0.3f, y, -0.8f), 0.3f * g.dx - 0.8f * g.dy, 1e-5);
}

int main(void) {
  check_d("csinh", f_sinh, 0.4, -1.1);
  check_d("ccosh", f_cosh, -0.7, 0.9);
  check_d("ctan", f_tan, 0.6, 0.35);
  check_d("ctan", f_tan, 0.6, 400.0);
  check_d("ctanh", f_tanh, 0.3, -0.45);
  check_d("ctanh", f_tanh, -400.0, 0.2);
  check_d("cpow", f_pow, 0.8, 1.3);
  check_d("cproj", f_proj, 0.8, 1.3);
  check_f("cexpf", g_exp, d_exp, 0.5f, -0.6f);
  check_f("cabsf_cargf", g_abs, d_abs, 0.9f, 0.4f);
  check_f("clogf", g_log, d_log, 1.2f, -0.7f);
  check_f("csqrtf", g_sqrt, d_sqrt, -0.3f, 0.8f);
  check_f("csinf_ccosf", g_sin, d_sin, 0.7f, 0.2f);
  check_f("csinhf_ccoshf", g_hyp, d_hyp, 0.4f, -0.5f);
  check_f("ctanf_ctanhf", g_tan, d_tan, 0.3f, 0.6f);
  check_f("cpowf", g_pow, d_pow, 1.1f, 0.3f);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
