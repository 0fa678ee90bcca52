/* What Eigen's packet code becomes with -march=native, written by hand: the fused multiply-add
   and the max as inline assembly (Eigen's AVX pmadd and pmax: `vfmadd231pd`, `vmaxpd`,
   rewritten at the link into llvm.fma and a compare and select; refused before: "no derivative
   rule for call to 'asm'"), the absolute value as an and of the sign bit on doubles LLVM loads
   as integers (refused: "integer arithmetic on data that holds a float"), and copies between
   hand-aligned blocks that keep malloc's pointer just before their first element (refused:
   "cannot deduce the type of the memory being copied"; where SIMD stores filled the source,
   the copy was taken for one of pointers, from the pointer before the block: a zero gradient
   with no error, as in Eigen's HouseholderQR under AVX-512). The assembly functions are
   compiled for FMA and AVX by their target attributes (x86-64 processors of the last decade).
   Reverse mode against central finite differences, forward mode against reverse. */
#include <emmintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

__attribute__((target("fma"))) static __m128d pmadd(__m128d a, __m128d b, __m128d c) {
  __asm__("vfmadd231pd %[a], %[b], %[c]" : [c] "+x"(c) : [a] "x"(a), [b] "x"(b));
  return c;
}

__attribute__((target("avx"))) static __m128d pmax(__m128d a, __m128d b) {
  __m128d res;                                   /* Eigen's AVX pmax: b > a ? b : a per lane */
  __asm__("vmaxpd %[a], %[b], %[res]" : [res] "=x"(res) : [a] "x"(a), [b] "x"(b));
  return res;
}

static double *aligned64(size_t n) {
  char *raw = malloc(n * sizeof(double) + 64);
  char *p = (char *)(((uintptr_t)raw & ~(uintptr_t)63) + 64);
  ((void **)p)[-1] = raw;
  return (double *)p;
}

__attribute__((noinline)) static double packets(const double *x, size_t n) {
  double *t = aligned64(n);
  memcpy(t, x, n * sizeof *t);
  __m128d mask = _mm_castsi128_pd(_mm_set1_epi64x(0x7fffffffffffffffLL));
  __m128d acc = _mm_set1_pd(0.25);
  for (size_t i = 0; i + 2 <= n; i += 2) {
    __m128d a = _mm_and_pd(_mm_loadu_pd(x + i), mask);        /* |x[i]|, |x[i+1]| */
    acc = pmadd(a, _mm_load_pd(t + i), acc);                   /* acc + |x| * x */
    acc = pmax(acc, _mm_set1_pd(0.4) * a);
  }
  free(((void **)t)[-1]);
  double o[2];
  _mm_storeu_pd(o, acc * acc);
  return o[0] + 2 * o[1];
}

__attribute__((noinline)) static double weighted(const double *b) {
  double s = 0;
  for (int i = 0; i < N; i++) s += b[i] * b[i] * (i + 1);
  return s;
}

__attribute__((noinline)) static double copies(const double *x) {
  double *a = aligned64(N), *b = aligned64(N);
  for (int i = 0; i + 2 <= N; i += 2)
    _mm_store_pd(a + i, _mm_loadu_pd(x + i) * _mm_set1_pd(1.5));   /* a: packets only */
  memcpy(b, a, N * sizeof *b);
  double s = weighted(b);
  free(((void **)a)[-1]);
  free(((void **)b)[-1]);
  return s;
}

static double f(const double *x) { return packets(x, N) + copies(x) + sin(x[2]); }

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
