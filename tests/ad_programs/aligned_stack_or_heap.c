/* Eigen's aligned temporary (ei_declare_aligned_stack_constructed_variable under AVX-512): a
   stack block from alloca when small, a heap block when large, either address rounded up to
   64 bytes as an integer, joined by a phi. The heap side got a shadow and the stack side none
   (a null shadow: the gradient of Eigen's SimplicialLDLT with -march=native crashed in the
   reverse of a memset of its ordering's integer workspace). Both sides are run. Reverse mode against central finite differences,
   forward mode against reverse. */
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

static long stack_limit = 4096;      /* bytes: the threshold Eigen's macro uses (a global, so
                                        the test can take the heap side too) */

/* An aligned temporary of n ints: from the stack when small, else from the heap with malloc's
   pointer kept just before it (for the free), as Eigen's aligned_malloc does. */
#define ALIGNED_TEMP(buf, raw, count)                                                    \
  do {                                                                                   \
    size_t bytes_ = (count) * sizeof *(buf);                                             \
    raw = 0;                                                                             \
    if ((long)bytes_ <= stack_limit) {                                                   \
      char *a_ = __builtin_alloca(bytes_ + 63);                                          \
      buf = (void *)(((uintptr_t)a_ + 63) & ~(uintptr_t)63);                             \
    } else {                                                                             \
      raw = malloc(bytes_ + 64);                                                         \
      if (!raw) abort();                                                                 \
      buf = (void *)(((uintptr_t)raw & ~(uintptr_t)63) + 64);                            \
      ((void **)(void *)buf)[-1] = raw;                                                  \
    }                                                                                    \
  } while (0)

__attribute__((noinline)) static double work(const double *x, long n) {
  int *perm;
  double *buf;
  char *raw_p, *raw_b;
  ALIGNED_TEMP(perm, raw_p, n);                 /* integers: an ordering, as in AMD */
  ALIGNED_TEMP(buf, raw_b, n);                  /* doubles */
  memset(perm, -1, n * sizeof *perm);
  for (long i = 0; i < n; i++) perm[(5 * i) % n] = (int)i;        /* (5 and N coprime: a permutation) */
  memset(buf, 0, n * sizeof *buf);
  for (long i = 0; i < n; i++) buf[i] += x[perm[i]] * x[(i + 1) % n];
  double s = 0;
  for (long i = 0; i < n; i++) s += buf[i] * sin(x[i]);
  free(raw_p);
  free(raw_b);
  return s;
}

static double f(const double *x) { return work(x, N); }

static void run(const char *side) {
  double x[N] = {0.8, -1.3, 1.7, 0.4, -0.6, 2.1}, dx[N] = {0}, t[N], dot = 0, h = 1e-6;
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx);
  for (int i = 0; i < N; i++) {
    double keep = x[i];
    x[i] = keep + h;
    double up = f(x);
    x[i] = keep - h;
    double down = f(x);
    x[i] = keep;
    char name[32];
    snprintf(name, sizeof name, "%s_dx[%d]", side, i);
    check(name, dx[i], (up - down) / (2 * h));
    t[i] = cos(1.0 + i);
    dot += t[i] * dx[i];
  }
  char name[32];
  snprintf(name, sizeof name, "%s_fwd", side);
  check(name, __enzyme_fwddiff((void *)f, enzyme_dup, x, t), dot);
}

int main(void) {
  run("stack");
  stack_limit = 0;
  run("heap");
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
