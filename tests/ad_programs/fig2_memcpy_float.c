/* Paper Figure 2 (right): memcpy of float data; 8 bytes are two floats, so the reverse pass
   must do two float additions, not one double addition. */
#include <math.h>
#include <stdio.h>
#include <string.h>
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
float __enzyme_autodiff(void *, ...);
float __enzyme_fwddiff(void *, ...);

__attribute__((noinline)) static void copy_bytes(void *dst, const void *src, size_t bytes) {
  memcpy(dst, src, bytes);
}

/* 8 bytes = two floats */
float pair(const float *x) {
  float tmp[2];
  copy_bytes(tmp, x, 8);
  return tmp[0] * tmp[0] + 3.0f * tmp[1];
}

float runtime_size(const float *x, int n) {
  float tmp[16];
  memcpy(tmp, x, n * sizeof(float));
  float s = 0;
  for (int i = 0; i < n; i++) s += tmp[i] * tmp[i] * (float)(i + 1);
  return s;
}

int main(void) {
  float x[2] = {1.5f, -2.0f}, dx[2] = {0};
  __enzyme_autodiff((void *)pair, x, dx);
  check("pair_d0", dx[0], 2 * x[0]);
  check("pair_d1", dx[1], 3.0);

  float y[5] = {1, -2, 0.5f, 3, 0.25f}, dy[5] = {0};
  __enzyme_autodiff((void *)runtime_size, enzyme_dup, y, dy, enzyme_const, 5);
  for (int i = 0; i < 5; i++) checki("runtime_d", i, dy[i], 2.0 * y[i] * (i + 1));

  /* forward/reverse dot test: the tangent along a direction v equals v . gradient */
  float v[5];
  double vdx = 0, vdy = 0;
  for (int i = 0; i < 5; i++) { v[i] = (float)sin(1.3 + 7.1 * i); vdy += v[i] * dy[i]; vdx += i < 2 ? v[i] * dx[i] : 0; }
  check("dot_pair", __enzyme_fwddiff((void *)pair, x, v), vdx);
  check("dot_runtime_size", __enzyme_fwddiff((void *)runtime_size, enzyme_dup, y, v, enzyme_const, 5), vdy);
  return report();
}
