// A file-scope struct whose pointer field holds a heap block (jl's gather-scatter library:
// `static buffer static_buffer;`, reached as `buf ? buf : &static_buffer` and grown by a
// reserve function that takes its address). The block is allocated before the derivative
// starts; the derivative scatters float data into it and gathers it back. Its shadow slot got
// no block (the global's address was passed on, so its slot was not proven a heap block), and
// the derivative dereferenced a null shadow: a segmentation fault (Nekbone on 2 ranks).
#include <stdio.h>
#include <stdlib.h>
extern double __enzyme_autodiff(void *, ...);
extern double __enzyme_fwddiff(void *, ...);
extern int enzyme_dup, enzyme_const;
typedef struct { void *ptr; size_t n, max; } buffer;
static buffer static_buffer;
__attribute__((noinline)) static void *checked_realloc(void *p, size_t n) {
  void *q = realloc(p, n);
  if (!q && n) { fprintf(stderr, "out of memory\n"); exit(1); }
  return q;
}
__attribute__((noinline)) static void reserve(buffer *b, size_t min) {
  if (b->max < min) {
    size_t max = b->max + b->max / 2 + 1;
    if (max < min) max = min;
    b->ptr = checked_realloc(b->ptr, max);
    b->max = max;
  }
}
__attribute__((noinline)) static void scatter(double *out, const double *in, int n) {
  for (int i = 0; i < n; i++) out[i] = in[n - 1 - i];
}
__attribute__((noinline)) static void gather(double *out, const double *in, int n) {
  for (int i = 0; i < n; i++) out[i] += in[i] * out[i];
}
__attribute__((noinline)) void exchange(double *u, int n, buffer *buf) {
  if (!buf) buf = &static_buffer;
  reserve(buf, n * sizeof(double));
  buf->n = n;
  scatter(buf->ptr, u, n);
  gather(u, buf->ptr, n);
}
double f(double *u, int n) {
  exchange(u, n, 0);
  double s = 0;
  for (int i = 0; i < n; i++) s += u[i] * (i + 1);
  return s;
}
int main(void) {
  enum { N = 6 };
  double x[N] = {0.3, -0.7, 1.1, 0.4, 2.0, -1.3}, h = 1e-6;
  reserve(&static_buffer, 64 * sizeof(double));    // allocated before the derivative
  double u[N], du[N] = {0};
  for (int i = 0; i < N; i++) u[i] = x[i];
  __enzyme_autodiff((void *)f, enzyme_dup, u, du, enzyme_const, N);
  for (int i = 0; i < N; i++) {
    double p[N], m[N], v[N], t[N] = {0};
    for (int k = 0; k < N; k++) p[k] = m[k] = v[k] = x[k];
    p[i] += h, m[i] -= h, t[i] = 1;
    double fd = (f(p, N) - f(m, N)) / (2 * h);
    double fwd = __enzyme_fwddiff((void *)f, enzyme_dup, v, t, enzyme_const, N);
    printf("CHECK rev_%d %.9g %.9g\n", i, du[i], fd);
    printf("CHECK fwd_%d %.9g %.9g\n", i, fwd, fd);
  }
  return 0;
}
