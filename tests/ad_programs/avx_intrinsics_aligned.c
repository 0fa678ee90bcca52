/* Code built for AVX: max, min and horizontal adds written with intrinsics (clang keeps them as
   llvm.x86.avx.* calls; they were refused: no derivative rule), on a buffer from a hand-made
   64-byte aligned allocation (malloc, then the address rounded up as an integer: Eigen's
   handmade_aligned_malloc under AVX-512; refused before: "float data accessed through a pointer
   made from an integer"), and a local aligned to 32 bytes for an aligned AVX store (its shadow
   was aligned to 16 only: the gradient crashed at -O2 where it fell on an odd 16 bytes). The
   AVX function is compiled for AVX by its target attribute and runs only where the processor
   has AVX (elsewhere the checks compare the plain C version with itself). Reverse mode against
   central finite differences, forward mode against reverse. */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

static double *aligned64(size_t bytes) {
  char *raw = malloc(bytes + 64);
  char *p = (char *)(((uintptr_t)raw & ~(uintptr_t)63) + 64);
  ((void **)p)[-1] = raw;
  return (double *)p;
}
static void aligned_free(double *p) { free(((void **)p)[-1]); }

__attribute__((noinline)) static double weigh(const double *o) {
  return o[0] + 2 * o[1] + 3 * o[2] + 4 * o[3];
}

__attribute__((noinline, target("avx"))) static double avx_part(const double *x) {
  double *t = aligned64(N * sizeof *t);
  __m256d a = _mm256_loadu_pd(x), b = _mm256_loadu_pd(x + 4);
  _mm256_store_pd(t, _mm256_max_pd(a, b) * a);
  _mm256_store_pd(t + 4, _mm256_min_pd(a, b) + b * b);
  __m256d h = _mm256_hadd_pd(_mm256_load_pd(t), _mm256_load_pd(t + 4));
  __m256d s = _mm256_hsub_pd(h, a);
  double o[4] __attribute__((aligned(32)));           /* a local the AVX store needs aligned */
  _mm256_store_pd(o, s * h);
  aligned_free(t);
  return weigh(o);
}

/* the same in plain C */
__attribute__((noinline)) static double plain_part(const double *x) {
  double m[4], n[4], h[4], s[4], r = 0;
  for (int i = 0; i < 4; i++) {
    m[i] = (x[i] > x[4 + i] ? x[i] : x[4 + i]) * x[i];
    n[i] = (x[i] < x[4 + i] ? x[i] : x[4 + i]) + x[4 + i] * x[4 + i];
  }
  h[0] = m[0] + m[1], h[1] = n[0] + n[1], h[2] = m[2] + m[3], h[3] = n[2] + n[3];
  s[0] = h[0] - h[1], s[1] = x[0] - x[1], s[2] = h[2] - h[3], s[3] = x[2] - x[3];
  for (int i = 0; i < 4; i++) r += (i + 1) * s[i] * h[i];
  return r;
}

static int have_avx;
static double f(const double *x) { return have_avx ? avx_part(x) : plain_part(x); }

int main(void) {
  __builtin_cpu_init();
  have_avx = __builtin_cpu_supports("avx");
  double x[N] = {0.8, -1.3, 1.7, 0.4, -0.6, 2.1, 0.9, -0.2}, dx[N] = {0}, t[N], dot = 0, h = 1e-6;
  check("primal", f(x), plain_part(x));
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx);
  for (int i = 0; i < N; i++) {
    double keep = x[i];
    x[i] = keep + h;
    double up = plain_part(x);
    x[i] = keep - h;
    double down = plain_part(x);
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
