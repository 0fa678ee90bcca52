/* The float variants of libm: sinf cosf tanf expf logf sqrtf powf tanhf fabsf atan2f hypotf
   cbrtf erff expm1f log1pf fmaxf fminf; float in, float out. */
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
typedef struct { float d0, d1; } F2;
float __enzyme_autodiff(void *, ...);
F2 __enzyme_autodiff2(void *, ...);
float __enzyme_fwddiff(void *, ...);

float f_sinf(float x) { return sinf(x); }
float f_cosf(float x) { return cosf(x); }
float f_tanf(float x) { return tanf(x); }
float f_expf(float x) { return expf(x); }
float f_logf(float x) { return logf(x); }
float f_sqrtf(float x) { return sqrtf(x); }
float f_powf(float x) { return powf(x, 3.0f); }
float f_tanhf(float x) { return tanhf(x); }
float f_fabsf(float x) { return fabsf(x); }
float f_cbrtf(float x) { return cbrtf(x); }
float f_erff(float x) { return erff(x); }
float f_expm1f(float x) { return expm1f(x); }
float f_log1pf(float x) { return log1pf(x); }
float f_atan2f(float y, float x) { return atan2f(y, x); }
float f_hypotf(float x, float y) { return hypotf(x, y); }
float f_fmaxf(float x, float y) { return fmaxf(x, y); }
float f_fminf(float x, float y) { return fminf(x, y); }

int main(void) {
  float x = 0.6f, y = -1.2f;
  double xd = x, yd = y;
  check("sinf", __enzyme_autodiff((void *)f_sinf, x), cos(xd));
  check("cosf", __enzyme_autodiff((void *)f_cosf, x), -sin(xd));
  check("tanf", __enzyme_autodiff((void *)f_tanf, x), 1 / (cos(xd) * cos(xd)));
  check("expf", __enzyme_autodiff((void *)f_expf, x), exp(xd));
  check("logf", __enzyme_autodiff((void *)f_logf, x), 1 / xd);
  check("sqrtf", __enzyme_autodiff((void *)f_sqrtf, x), 0.5 / sqrt(xd));
  check("powf", __enzyme_autodiff((void *)f_powf, x), 3 * xd * xd);
  check("tanhf", __enzyme_autodiff((void *)f_tanhf, x), 1 - tanh(xd) * tanh(xd));
  check("fabsf", __enzyme_autodiff((void *)f_fabsf, y), -1.0);
  check("cbrtf", __enzyme_autodiff((void *)f_cbrtf, x), 1 / (3 * cbrt(xd) * cbrt(xd)));
  check("erff", __enzyme_autodiff((void *)f_erff, x), 2 / sqrt(3.14159265358979323846) * exp(-xd * xd));
  check("expm1f", __enzyme_autodiff((void *)f_expm1f, x), exp(xd));
  check("log1pf", __enzyme_autodiff((void *)f_log1pf, x), 1 / (1 + xd));
  F2 g = __enzyme_autodiff2((void *)f_atan2f, x, y);
  check("atan2f_dy", g.d0, yd / (xd * xd + yd * yd));
  check("atan2f_dx", g.d1, -xd / (xd * xd + yd * yd));
  g = __enzyme_autodiff2((void *)f_hypotf, x, y);
  check("hypotf_dx", g.d0, xd / hypot(xd, yd));
  check("hypotf_dy", g.d1, yd / hypot(xd, yd));
  g = __enzyme_autodiff2((void *)f_fmaxf, x, y);
  check("fmaxf_dx", g.d0, 1.0);
  check("fmaxf_dy", g.d1, 0.0);
  g = __enzyme_autodiff2((void *)f_fminf, x, y);
  check("fminf_dx", g.d0, 0.0);
  check("fminf_dy", g.d1, 1.0);
  /* forward/reverse dot test: the tangent along a direction (v0, v1) equals it . gradient */
  const float v0 = 0.3f, v1 = -0.7f;
#define DOT1(name, f, a) check("dot_" name, __enzyme_fwddiff((void *)f, a, v0), v0 * __enzyme_autodiff((void *)f, a))
#define DOT2(name, f)                                    \
  g = __enzyme_autodiff2((void *)f, x, y);               \
  check("dot_" name, __enzyme_fwddiff((void *)f, x, v0, y, v1), v0 * g.d0 + v1 * g.d1)
  DOT1("sinf", f_sinf, x);
  DOT1("cosf", f_cosf, x);
  DOT1("tanf", f_tanf, x);
  DOT1("expf", f_expf, x);
  DOT1("logf", f_logf, x);
  DOT1("sqrtf", f_sqrtf, x);
  DOT1("powf", f_powf, x);
  DOT1("tanhf", f_tanhf, x);
  DOT1("fabsf", f_fabsf, y);
  DOT1("cbrtf", f_cbrtf, x);
  DOT1("erff", f_erff, x);
  DOT1("expm1f", f_expm1f, x);
  DOT1("log1pf", f_log1pf, x);
  DOT2("atan2f", f_atan2f);
  DOT2("hypotf", f_hypotf);
  DOT2("fmaxf", f_fmaxf);
  DOT2("fminf", f_fminf);
  return report();
}
