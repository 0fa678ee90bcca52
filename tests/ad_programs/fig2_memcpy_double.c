/* Paper Figure 2 (left): memcpy of double data, once directly with a runtime size and once
   through an untyped void* helper; the reverse pass must add the shadows as doubles. */
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
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random direction entries */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

__attribute__((noinline)) static void copy_bytes(void *dst, const void *src, size_t bytes) {
  memcpy(dst, src, bytes);
}

/* f = x0*x1 + x2*x3^2 computed from a copy */
double via_helper(const double *x) {
  double tmp[4];
  copy_bytes(tmp, x, sizeof tmp);
  return tmp[0] * tmp[1] + tmp[2] * tmp[3] * tmp[3];
}

/* f = sum_i i * x_i^2, the copy has a size known only at run time */
double via_memcpy(const double *x, int n) {
  double tmp[16];
  memcpy(tmp, x, n * sizeof(double));
  double s = 0;
  for (int i = 0; i < n; i++) s += i * tmp[i] * tmp[i];
  return s;
}

/* a single 8-byte object copied through void* (the figure's exact case) */
double one_object(const double *x) {
  double y;
  copy_bytes(&y, x, 8);
  return y * y * y;
}

int main(void) {
  double x[4] = {1.5, -2, 0.5, 3}, dx[4] = {0};
  __enzyme_autodiff((void *)via_helper, x, dx);
  check("helper_d0", dx[0], x[1]);
  check("helper_d1", dx[1], x[0]);
  check("helper_d2", dx[2], x[3] * x[3]);
  check("helper_d3", dx[3], 2 * x[2] * x[3]);

  double y[6] = {1, 2, 3, -1, 0.25, 2}, dy[6] = {0};
  __enzyme_autodiff((void *)via_memcpy, enzyme_dup, y, dy, enzyme_const, 6);
  for (int i = 0; i < 6; i++) checki("memcpy_d", i, dy[i], 2 * i * y[i]);

  /* forward/reverse dot test: the tangent along a direction v equals v . gradient */
  double v[6], vdx = 0, vdy = 0;
  for (int i = 0; i < 6; i++) { v[i] = rnd(i); vdy += v[i] * dy[i]; vdx += i < 4 ? v[i] * dx[i] : 0; }
  check("dot_via_helper", __enzyme_fwddiff((void *)via_helper, x, v), vdx);
  check("dot_via_memcpy", __enzyme_fwddiff((void *)via_memcpy, enzyme_dup, y, v, enzyme_const, 6), vdy);

  double z = 1.25, dz = 0;
  __enzyme_autodiff((void *)one_object, &z, &dz);
  check("one_object", dz, 3 * z * z);
  check("dot_one_object", __enzyme_fwddiff((void *)one_object, &z, v), v[0] * dz);
  return report();
}
