/* Truncation to the formats computed inline (float, half): op mode and mem mode, bit-exact against
   the same computation written by hand in the narrow type, one rounding per operation. */
#include "check.h"
#include <string.h>
void *__enzyme_truncate_op_func(void *, int, int, ...);
void *__enzyme_truncate_mem_func(void *, int, int, ...);
double __enzyme_truncate_mem_value(double, int, int);
double __enzyme_expand_mem_value(double, int, int);
float __enzyme_truncate_mem_value_f(float, int, int);
float __enzyme_expand_mem_value_f(float, int, int);

/* float -> half: a constant result is stored in the float slot's representation */
static float clampish(float a) { return a > 1.0f ? 2.5f : a * 3.0f; }
static _Float16 clampish_h(_Float16 a) {
  return (float)a > 1.0f ? (_Float16)2.5f : (_Float16)((float)a * 3.0f);
}

/* branches, a loop over memory, libm and intrinsic calls, integer conversions, a callee */
static double scale(double v, int k) { return v * k + 0.25; }
static double kernel(double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    double t = scale(a[i], i + 1);
    double u = t > b[i] ? sqrt(fabs(t)) : fma(t, b[i], 1.5);
    double w = u - b[i] / 3.0;
    a[i] = w;                     /* mem mode: stores the narrow representation */
    s = s + w * w;
    s = s + (double)(int)(w * 4.0);
  }
  return s;
}
static float scale_f(float v, int k) { return v * k + 0.25f; }
static float kernel_f(float *a, const float *b, int n) {
  float s = 0;
  for (int i = 0; i < n; i++) {
    float t = scale_f(a[i], i + 1);
    float u = t > b[i] ? sqrtf(fabsf(t)) : fmaf(t, b[i], 1.5f);
    float w = u - b[i] / 3.0f;
    a[i] = w;
    s = s + w * w;
    s = s + (float)(int)(w * 4.0f);
  }
  return s;
}
/* one operation per statement (no contraction), so half rounds after each */
static double steps(double a, double b) {
  double p = a * b;
  double q = p - 0.3;
  double r = q / (a + 2.0);
  return exp(r) + r;
}
#define STEPS_NARROW(T, NAME)                                                                  \
  static T NAME(T a, T b) {                                                                    \
    T p = (T)((float)a * (float)b);                                                            \
    T q = (T)((float)p - (float)(T)0.3);                                                       \
    T r = (T)((float)q / (float)(T)((float)a + 2.0f));                                         \
    return (T)((float)(T)expf((float)r) + (float)r);                                           \
  }
STEPS_NARROW(_Float16, steps_h)

/* vector code (clang's vector extension): lanes truncated alike, vector literals rounded */
typedef double v2d __attribute__((vector_size(16)));
typedef float v2f __attribute__((vector_size(8)));
static void axpb(v2d *a) { *a = *a * (v2d){1.1, 2.2} + 0.3; }
static v2f axpb_f(v2f a) { return a * (v2f){1.1f, 2.2f} + 0.3f; }

typedef double (*Kernel)(double *, const double *, int);
typedef double (*Steps)(double, double);
enum { N = 6 };

int main(void) {
  double a[N], b[N], am[N], bm[N];
  float af[N], bf[N];
  for (int i = 0; i < N; i++) {
    a[i] = rnd(i), b[i] = rnd(i + N);
    af[i] = (float)a[i], bf[i] = (float)b[i];
    am[i] = __enzyme_truncate_mem_value(a[i], 64, 32);
    bm[i] = __enzyme_truncate_mem_value(b[i], 64, 32);
  }
  /* mem values round-trip exactly to the float value */
  for (int i = 0; i < N; i++) {
    check_exact("roundtrip32", __enzyme_expand_mem_value(am[i], 64, 32), (double)af[i]);
    double h = __enzyme_truncate_mem_value(a[i], 64, 16);
    check_exact("roundtrip16", __enzyme_expand_mem_value(h, 64, 16), (double)(_Float16)a[i]);
  }
  Kernel op = (Kernel)__enzyme_truncate_op_func((void *)kernel, 64, 32);
  Kernel mem = (Kernel)__enzyme_truncate_mem_func((void *)kernel, 64, 32);
  double ao[N];
  memcpy(ao, a, sizeof a);
  float want = kernel_f(af, bf, N);
  check_exact("op32", op(ao, b, N), want);
  double s = __enzyme_expand_mem_value(mem(am, bm, N), 64, 32);
  check_exact("mem32", s, want);
  for (int i = 0; i < N; i++) {
    check_exact("op32_store", ao[i], af[i]);      /* op mode: memory holds widened floats */
    check_exact("mem32_store", __enzyme_expand_mem_value(am[i], 64, 32), af[i]);
  }
  /* the 4-argument form names the same formats by exponent and significand bits */
  Steps h16 = (Steps)__enzyme_truncate_op_func((void *)steps, 64, 5, 10);
  Steps h16w = (Steps)__enzyme_truncate_op_func((void *)steps, 64, 16);
  Steps m16 = (Steps)__enzyme_truncate_mem_func((void *)steps, 64, 16);
  for (int k = 0; k < 4; k++) {
    double x = rnd(30 + k), y = rnd(40 + k);
    check_exact("op16", h16(x, y), (double)steps_h((_Float16)x, (_Float16)y));
    check_exact("op16_width", h16w(x, y), h16(x, y));
    double r = m16(__enzyme_truncate_mem_value(x, 64, 16), __enzyme_truncate_mem_value(y, 64, 16));
    check_exact("mem16", __enzyme_expand_mem_value(r, 64, 16),
                (double)steps_h((_Float16)x, (_Float16)y));
  }
  float (*cf)(float) = (float (*)(float))__enzyme_truncate_mem_func((void *)clampish, 32, 16);
  float (*co)(float) = (float (*)(float))__enzyme_truncate_op_func((void *)clampish, 32, 16);
  for (int k = 0; k < 3; k++) {
    float v = (float)rnd(60 + k) / 2;
    float r = __enzyme_expand_mem_value_f(cf(__enzyme_truncate_mem_value_f(v, 32, 16)), 32, 16);
    check_exact("mem32to16", r, (float)clampish_h((_Float16)v));
    check_exact("op32to16", co(v), (float)clampish_h((_Float16)v));
  }
  v2d va = {rnd(50), rnd(51)}, vm = {__enzyme_truncate_mem_value(va[0], 64, 32),
                                      __enzyme_truncate_mem_value(va[1], 64, 32)};
  v2f vw = axpb_f((v2f){(float)va[0], (float)va[1]});
  ((void (*)(v2d *))__enzyme_truncate_op_func((void *)axpb, 64, 32))(&va);
  ((void (*)(v2d *))__enzyme_truncate_mem_func((void *)axpb, 64, 32))(&vm);
  for (int k = 0; k < 2; k++) {
    check_exact("op32_vector", va[k], vw[k]);
    check_exact("mem32_vector", __enzyme_expand_mem_value(vm[k], 64, 32), vw[k]);
  }
  return report();
}
