/* SSE max and min written as inline assembly, as Eigen's pmax/pmin do (reached by its
   ColPivHouseholderQR, JacobiSVD and BDCSVD): the link step rewrites `maxpd`/`minpd`/`maxps`/
   `minps` into a compare and a select (the same result on every input), which AD differentiates;
   before, "no derivative rule for call to 'asm'". Reverse mode against central finite
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
#define N 8

static __m128d pmax(__m128d a, __m128d b) {
  __m128d r = b;
  __asm__("maxpd %1, %0" : "+x"(r) : "x"(a));
  return r;
}
static __m128d pmin(__m128d a, __m128d b) {
  __m128d r = b;
  __asm__("minpd %1, %0" : "+x"(r) : "x"(a));
  return r;
}
static __m128 pmaxf(__m128 a, __m128 b) {
  __m128 r = b;
  __asm__("maxps %1, %0" : "+x"(r) : "x"(a));
  return r;
}

/* the largest and smallest scaled entries, pairwise over the array */
static double f(const double *x) {
  __m128d hi = _mm_loadu_pd(x), lo = hi;
  for (int i = 2; i < N; i += 2) {
    __m128d v = _mm_mul_pd(_mm_loadu_pd(x + i), _mm_set1_pd(1.0 + 0.1 * i));
    hi = pmax(v, hi);
    lo = pmin(v, lo);
  }
  double h[2], l[2];
  _mm_storeu_pd(h, hi);
  _mm_storeu_pd(l, lo);
  return h[0] * h[1] + sin(l[0]) - l[1];
}

/* in float: sum of max(x_k, x_k^2 - 0.5) over 4 lanes (d/dx_k: 1 or 2 x_k) */
static float g(const float *x) {
  float y[4], out[4];
  for (int k = 0; k < 4; k++) y[k] = x[k] * x[k] - 0.5f;
  _mm_storeu_ps(out, pmaxf(_mm_loadu_ps(x), _mm_loadu_ps(y)));
  return out[0] + out[1] + out[2] + out[3];
}

int main(void) {
  double x[N] = {0.3, -1.2, 0.9, 0.4, -0.5, 1.1, -0.8, 0.2}, dx[N] = {0}, v[N], dot = 0, h = 1e-6;
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
    v[i] = cos(1.0 + i);
    dot += v[i] * dx[i];
  }
  check("fwd", __enzyme_fwddiff((void *)f, enzyme_dup, x, v), dot);
  float xf[4] = {0.3f, -1.2f, 1.6f, -0.4f}, dxf[4] = {0};
  __enzyme_autodiff((void *)g, enzyme_dup, xf, dxf);
  for (int k = 0; k < 4; k++) {
    char name[16];
    snprintf(name, sizeof name, "dxf[%d]", k);
    check(name, dxf[k], xf[k] > xf[k] * xf[k] - 0.5f ? 1.0 : 2.0 * xf[k]);
  }
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
