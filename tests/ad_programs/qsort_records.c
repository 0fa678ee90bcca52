/* qsort of records that carry derivatives (particles sorted by a float key, then by an
   integer cell key with GNU's qsort_r and a direction argument, as neighbour-list and
   cell-sorting codes do): their adjoints and tangents move with the elements (enzyme-cc's
   registered qsort derivatives, rules/c_sort.c). The objective depends on the order (a
   weighted prefix sum). Reverse, forward and vector forward mode, checked against central
   differences. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const, enzyme_width;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
typedef struct { double a, b; } two;
two __enzyme_fwddiff2(void *, ...) __asm__("__enzyme_fwddiff");

typedef struct { int cell; double x, w; } particle;

static int by_x(const void *a, const void *b) {
  double d = ((const particle *)a)->x - ((const particle *)b)->x;
  return (d > 0) - (d < 0);
}
static int by_cell(const void *a, const void *b, void *direction) {
  return *(const int *)direction * (((const particle *)a)->cell - ((const particle *)b)->cell);
}

__attribute__((noinline)) double energy(const double *pos, const double *wts, int n) {
  particle *p = malloc(n * sizeof *p);
  for (int i = 0; i < n; i++) p[i] = (particle){(int)(pos[i] * 2.0) % 3, pos[i] * pos[i], wts[i]};
  qsort(p, n, sizeof *p, by_x);
  double e = 0, acc = 0;
  for (int k = 0; k < n; k++) {            /* the order matters: a weighted prefix sum */
    acc += p[k].x * (k + 1);
    e += acc * p[k].w;
  }
  int descending = -1;                     /* an integer key: the floats still move */
  qsort_r(p, n, sizeof *p, by_cell, &descending);
  for (int k = 0; k + 1 < n; k++) e += sin(p[k].x) * p[k + 1].w * (k + 2);
  free(p);
  return e;
}

int main(void) {
  enum { N = 7 };
  double pos[N] = {0.9, -0.4, 1.3, 0.2, -1.1, 0.65, 1.7}, wts[N] = {1, 0.5, 2, 1.5, 0.8, 1.2, 0.3};
  double dpos[N] = {0}, dwts[N] = {0};
  __enzyme_autodiff((void *)energy, enzyme_dup, pos, dpos, enzyme_dup, wts, dwts,
                    enzyme_const, N);
  for (int i = 0; i < 2 * N; i++) {
    double *v = i < N ? &pos[i] : &wts[i - N], h = 1e-6, old = *v;
    *v = old + h;
    double ep = energy(pos, wts, N);
    *v = old - h;
    double em = energy(pos, wts, N);
    *v = old;
    char name[32];
    snprintf(name, sizeof name, "rev_d%s[%d]", i < N ? "pos" : "wts", i % N);
    check(name, i < N ? dpos[i] : dwts[i - N], (ep - em) / (2 * h));
    double tp[N] = {0}, tw[N] = {0};
    if (i < N) tp[i] = 1; else tw[i - N] = 1;
    snprintf(name, sizeof name, "fwd_d%s[%d]", i < N ? "pos" : "wts", i % N);
    check(name, __enzyme_fwddiff((void *)energy, enzyme_dup, pos, tp, enzyme_dup, wts, tw,
                                 enzyme_const, N), i < N ? dpos[i] : dwts[i - N]);
  }
  /* vector forward mode: two directions in one call, the array sorted once */
  double v1[N] = {1, 0, 0, 0, 0, 0, 0}, v2[N] = {0, 0, 0, 0, 0, 0, 1}, w0[N] = {0};
  two t = __enzyme_fwddiff2((void *)energy, enzyme_width, 2, enzyme_dup, pos, v1, v2,
                            enzyme_dup, wts, w0, w0, enzyme_const, N);
  check("fwd2_dpos[0]", t.a, dpos[0]);
  check("fwd2_dpos[6]", t.b, dpos[6]);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
