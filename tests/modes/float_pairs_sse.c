/* Sign masks applied to floats as 64-bit integer lanes (SSE2's integer and/xor on
   _mm_castps_si128, as AVX-512 Eigen's float abs does on <8 x i64>): |x| and -x of four floats
   in two i64 lanes. Refused before ("integer arithmetic on data that holds a float").
   f(x) = sum_i c_i |x_i| x_i - (-x_i)^2 / 2:  df/dx_i = 2 c_i |x_i| - x_i.
   Each line: enzyme-cc | analytic. */
#include <emmintrin.h>
#include <math.h>
#include <stdio.h>

extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
void __enzyme_fwddiff(void *, ...);

static const float c[4] = {1.0f, 2.0f, -0.5f, 3.0f};

void f(const float *x, float *out) {
  __m128 v = _mm_loadu_ps(x);
  __m128i bits = _mm_castps_si128(v);
  __m128 a = _mm_castsi128_ps(_mm_and_si128(bits, _mm_set1_epi64x(0x7fffffff7fffffffll)));
  __m128 n = _mm_castsi128_ps(_mm_xor_si128(bits, _mm_set1_epi64x((long long)0x8000000080000000ull)));
  __m128 r = _mm_sub_ps(_mm_mul_ps(_mm_mul_ps(_mm_loadu_ps(c), a), v),
                        _mm_mul_ps(_mm_mul_ps(n, n), _mm_set1_ps(0.5f)));
  float t[4];
  _mm_storeu_ps(t, r);
  *out = t[0] + t[1] + t[2] + t[3];
}

int main(void) {
  float x[4] = {0.7f, -1.3f, 2.1f, -0.4f}, dx[4] = {0}, out = 0, dout = 1;
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_dup, &out, &dout);
  for (int i = 0; i < 4; i++) {
    float tx[4] = {0}, o = 0, t = 0;
    tx[i] = 1;
    __enzyme_fwddiff((void *)f, enzyme_dup, x, tx, enzyme_dup, &o, &t);
    double want = 2 * c[i] * fabs(x[i]) - x[i];
    printf("df/dx%d: %.6f | %.6f\n", i, dx[i], want);
    printf("df/dx%d forward: %.6f | %.6f\n", i, t, want);
  }
  return 0;
}
