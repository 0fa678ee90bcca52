/* Float data moved through integer types (type punning): `*(unsigned long long *)p =
   *(unsigned long long *)&x` into malloc'd memory and read back as a double, the 4-byte
   float/unsigned int variant, memcpy through an integer temporary, and a noinline helper copying
   through integer pointers whose arguments hold doubles. The integer accesses carry an integer
   TBAA tag, but the memory holds floats: the derivative must move with the bytes. Reverse mode
   against the analytic derivative, forward against reverse. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
int enzyme_dup;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
float __enzyme_autodiff_f(void *, float) __asm__("__enzyme_autodiff");
float __enzyme_fwddiff_f(void *, float, float) __asm__("__enzyme_fwddiff");

double pun_malloc(double x) {                    /* y = x, returns x^2 * sin(x) */
  double *p = malloc(sizeof(double));
  *(unsigned long long *)p = *(unsigned long long *)&x;
  double y = *p;
  free(p);
  return y * y * sin(x);
}

float pun_float(float x) {                       /* returns x^3 */
  float *p = malloc(sizeof(float));
  *(unsigned int *)p = *(unsigned int *)&x;
  float y = *p;
  free(p);
  return y * y * x;
}

double pun_memcpy(double x) {                    /* returns x^3 */
  unsigned long long u;
  memcpy(&u, &x, sizeof u);
  double *p = malloc(2 * sizeof(double));
  memcpy(p + 1, &u, sizeof u);
  p[0] = 2.0;
  double y = p[1] * p[0];
  free(p);
  return y * y * x / 4;
}

__attribute__((noinline)) void copy_bits(double *dst, const double *src) {
  *(unsigned long long *)dst = *(const unsigned long long *)src;
}

double pun_helper(double *x, int n) {            /* sum of x[i] * x[i+1] over copies */
  double *p = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) copy_bits(p + i, x + i);
  double s = 0;
  for (int i = 0; i + 1 < n; i++) s += p[i] * p[i + 1];
  free(p);
  return s;
}

int main(void) {
  const double x = 1.3;
  double want = 2 * x * sin(x) + x * x * cos(x);
  check("malloc_reverse", __enzyme_autodiff((void *)pun_malloc, x), want);
  check("malloc_forward", __enzyme_fwddiff((void *)pun_malloc, x, 1.0), want);
  const float xf = 1.25f;
  check("float_reverse", __enzyme_autodiff_f((void *)pun_float, xf), 3 * xf * xf);
  check("float_forward", __enzyme_fwddiff_f((void *)pun_float, xf, 1.0f), 3 * xf * xf);
  check("memcpy_reverse", __enzyme_autodiff((void *)pun_memcpy, x), 3 * x * x);
  check("memcpy_forward", __enzyme_fwddiff((void *)pun_memcpy, x, 1.0), 3 * x * x);
  enum { N = 5 };
  double v[N], dv[N] = {0}, t[N];
  for (int i = 0; i < N; i++) v[i] = 0.5 + 0.3 * i, t[i] = sin(1.3 + 7.1 * i);
  __enzyme_autodiff((void *)pun_helper, enzyme_dup, v, dv, N);
  for (int i = 0; i < N; i++) {
    char name[32];
    snprintf(name, sizeof name, "helper_reverse[%d]", i);
    check(name, dv[i], (i > 0 ? v[i - 1] : 0) + (i + 1 < N ? v[i + 1] : 0));
  }
  /* dot test: tangent along t == <t, gradient> */
  double dot = 0;
  for (int i = 0; i < N; i++) dot += t[i] * dv[i];
  check("helper_forward", __enzyme_fwddiff((void *)pun_helper, enzyme_dup, v, t, N), dot);
  return report();
}
