/* float functions: one active float returns a float; two return {float, float}; a float array. */
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
typedef struct { float dx, dy; } F2;
int enzyme_dup, enzyme_const;
float __enzyme_autodiff(void *, ...);
F2 __enzyme_autodiff2(void *, ...);
float __enzyme_fwddiff(void *, ...);

float cube(float x) { return x * x * x; }
float bilinear(float x, float y) { return x * y + 2.0f * x - y * y; }
float dotf(const float *a, const float *b, int n) {
  float s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

int main(void) {
  check("cube", __enzyme_autodiff((void *)cube, 1.5f), 3 * 1.5 * 1.5);
  F2 g = __enzyme_autodiff2((void *)bilinear, 1.5f, -0.5f);
  check("bilinear_dx", g.dx, -0.5 + 2);
  check("bilinear_dy", g.dy, 1.5 + 1);
  float a[3] = {1, 2, 3}, b[3] = {-1, 0.5f, 2}, da[3] = {0};
  __enzyme_autodiff((void *)dotf, enzyme_dup, a, da, enzyme_const, b, enzyme_const, 3);
  for (int i = 0; i < 3; i++) checki("dotf_da", i, da[i], b[i]);
  /* forward/reverse dot test: the tangent along a direction v equals v . gradient */
  float v[3] = {0.3f, -0.7f, 0.9f};
  check("dot_cube", __enzyme_fwddiff((void *)cube, 1.5f, v[0]), v[0] * __enzyme_autodiff((void *)cube, 1.5f));
  check("dot_bilinear", __enzyme_fwddiff((void *)bilinear, 1.5f, v[0], -0.5f, v[1]), v[0] * g.dx + v[1] * g.dy);
  check("dot_dotf", __enzyme_fwddiff((void *)dotf, enzyme_dup, a, v, enzyme_const, b, enzyme_const, 3),
        v[0] * da[0] + v[1] * da[1] + v[2] * da[2]);
  return report();
}
