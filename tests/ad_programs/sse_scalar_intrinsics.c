/* Scalar SSE intrinsics (they were refused by name): the approximate reciprocal square root and
   reciprocal of lane 0 refined by a Newton step (`_mm_rsqrt_ss`, `_mm_rcp_ss`; the derivative is
   that of x^-1/2 and 1/x taken at the approximation, as for the packed forms), a clamp by
   `_mm_max_ss`/`_mm_min_ss` and `_mm_max_sd`/`_mm_min_sd`, the upper lanes the scalar forms pass
   through, and a branch on `_mm_cvtss_si32`/`_mm_cvttsd_si32` (integer results: no derivative).
   Reverse mode against the chain rule worked out here with the same approximations, forward mode
   against reverse. */
#include <emmintrin.h>
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.9g %.9g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
float __enzyme_fwddiff(void *, ...);
#define N 7

static float lane0(__m128 v) { return _mm_cvtss_f32(v); }

__attribute__((noinline)) static float f(const float *x) {
  __m128 a = _mm_set_ss(x[0]), b = _mm_set_ss(x[1]);
  float y = lane0(_mm_rsqrt_ss(a));
  float s = y * (1.5f - 0.5f * x[0] * y * y);                  /* 1/sqrt(x0) */
  float z = lane0(_mm_rcp_ss(b));
  float r = z * (2.0f - x[1] * z);                             /* 1/x1 */
  __m128 c = _mm_min_ss(_mm_max_ss(_mm_set_ss(x[2]), _mm_set_ss(0.5f)), _mm_set_ss(2.0f));
  float clamp = lane0(c) * x[2];
  __m128d d = _mm_min_sd(_mm_max_sd(_mm_set_sd(x[3]), _mm_set_sd(-1.0)), _mm_set_sd(1.0));
  float clampd = (float)_mm_cvtsd_f64(d) * x[3];
  /* upper lanes pass through the scalar forms */
  __m128 up = _mm_rsqrt_ss(_mm_set_ps(x[6], x[5], x[4], 4.0f));
  float hi[4];
  _mm_storeu_ps(hi, up);
  float lanes = hi[1] + 2 * hi[2] + 3 * hi[3] * hi[3];
  int k = _mm_cvtss_si32(_mm_set_ss(x[4])), t = _mm_cvttsd_si32(_mm_set_sd(x[5]));
  float branch = (k > 1 ? 3.0f : 1.0f) * x[4] + (t < 0 ? x[5] * x[5] : x[5]);
  return s + r + clamp + clampd + lanes + branch;
}

int main(void) {
  float x[N] = {1.7f, 0.8f, 1.3f, 2.5f, 1.6f, -0.7f, 0.9f}, dx[N] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx);
  float y = lane0(_mm_rsqrt_ss(_mm_set_ss(x[0]))), dy = -0.5f * y * y * y;
  double ds = dy * (1.5 - 0.5 * x[0] * y * y) + y * (-0.5 * y * y - x[0] * y * dy);
  float z = lane0(_mm_rcp_ss(_mm_set_ss(x[1]))), dz = -z * z;
  double dr = dz * (2.0 - x[1] * z) + z * (-z - x[1] * dz);
  /* x2 inside [0.5, 2]: x2^2; x3 = 2.5 clamped to 1: 1 * x3; x4 lane 1 (1) and rounded to 2 > 1
     (3); x5 lane 2 (2) and truncated to 0, not negative (1); x6 lane 3 squared, times 3 */
  double want[N] = {ds, dr, 2 * x[2], 1.0, 1.0 + 3.0, 2.0 + 1.0, 6 * x[6]};
  for (int i = 0; i < N; i++) {
    char name[16];
    snprintf(name, sizeof name, "dx[%d]", i);
    check(name, dx[i], want[i]);
  }
  float v[N], dot = 0;
  for (int i = 0; i < N; i++) {
    v[i] = cosf(1.0f + i);
    dot += v[i] * dx[i];
  }
  check("fwd.rev", __enzyme_fwddiff((void *)f, enzyme_dup, x, v), dot);
  return failed != 0;
}
