/* SSE code changes signs on the bits: negation as a xor with -0.0 (_mm_xor_pd), absolute value
   as an and-not of it (_mm_andnot_pd), a negative magnitude as an or, on one lane or both, also
   after a broadcast (Eigen's 4x4 inverse flips the signs of its cofactors with a xor of
   {0, -0.0} on the broadcast reciprocal determinant; its gradient was wrong with no error: the
   derivative through the integer ops was dropped). Reverse mode against central finite
   differences, forward mode against reverse. */
#include <emmintrin.h>
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
#define N 6

__attribute__((noinline)) static double signs(const double *x) {
  __m128d a = _mm_loadu_pd(x), b = _mm_loadu_pd(x + 2), c = _mm_loadu_pd(x + 4);
  __m128d neg_hi = _mm_set_pd(-0.0, 0.0), neg_both = _mm_set1_pd(-0.0);
  __m128d r = _mm_set1_pd(1.0) / (a * b - _mm_set1_pd(0.5));     /* both lanes */
  __m128d d = _mm_shuffle_pd(r, r, 0);                              /* broadcast lane 0 */
  __m128d t1 = _mm_xor_pd(d, neg_hi) * c;                           /* +d, -d */
  __m128d t2 = _mm_andnot_pd(neg_both, a - b) * r;                  /* |a - b| */
  __m128d t3 = _mm_or_pd(c, neg_hi) + _mm_xor_pd(b, neg_both);      /* c0, -|c1|; -b */
  __m128d s = t1 * t1 + t2 + t3 * a;
  double out[2];
  _mm_storeu_pd(out, s);
  return out[0] + 3 * out[1];
}

static double f(const double *x) { return signs(x) + sin(x[0]); }

int main(void) {
  double x[N] = {0.8, -1.3, 1.7, 0.4, -0.6, 2.1}, dx[N] = {0}, t[N], dot = 0, h = 1e-6;
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx);
  for (int i = 0; i < N; i++) {
    double keep = x[i];
    x[i] = keep + h;
    double up = f(x);
    x[i] = keep - h;
    double down = f(x);
    x[i] = keep;
    char name[16];
    snprintf(name, sizeof name, "dx[%d]", i);
    check(name, dx[i], (up - down) / (2 * h));
    t[i] = cos(1.0 + i);
    dot += t[i] * dx[i];
  }
  check("fwd", __enzyme_fwddiff((void *)f, enzyme_dup, x, t), dot);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
