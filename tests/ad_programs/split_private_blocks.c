/* Heap blocks a split pair's forward allocates for itself (LULESH's hourglass scratch arrays):
   nothing outside the call ever sees them, so a load no later write of the call reaches is read
   again by the reverse function instead of being taped (ad/analysis/memory.py, private_block). Each
   case is checked against central differences; the others are blocks a reload would read wrong:
   written again after the load, stored where the caller writes it, returned, passed to a callee,
   allocated once per iteration, grown by realloc, and an index array freed in the forward.
   Stores in loops into such blocks are undone by the reverse function (`repeated`). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

enum { N = 6, S = 4 };

/* scratch filled once, then read: reloadable */
__attribute__((noinline)) void phase(double *st, int n) {
  double *tmp = malloc(2 * n * sizeof(double));
  for (int i = 0; i < n; i++) {
    tmp[2 * i] = sin(st[i]) + 1.5;
    tmp[2 * i + 1] = st[(i + 1) % n] * st[i];
  }
  for (int i = 0; i < n; i++) st[i] = st[i] * tmp[2 * i] * 0.5 + sin(tmp[2 * i + 1]) * 0.3;
  free(tmp);
}

/* scratch read, then written again by a later loop of the same call: the reverse must see what
   was read, not what is there at the end */
__attribute__((noinline)) void rewritten(double *st, int n) {
  double *tmp = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) tmp[i] = cos(st[i]) + 0.2 * st[i];
  double acc = 0;
  for (int i = 0; i < n; i++) acc += tmp[i] * tmp[i];
  for (int i = 0; i < n; i++) tmp[i] = tmp[(i + 1) % n] * 3.0 - acc;
  for (int i = 0; i < n; i++) st[i] = st[i] * 0.7 + 0.01 * acc * st[i] + 0.1 * sin(tmp[i]);
  free(tmp);
}

/* the block's address is stored where the caller keeps it, and the caller writes the block
   before the reverse runs (no other write follows the loads here) */
struct keep { double *scratch; };
__attribute__((noinline)) double stored(const double *st, int n, struct keep *k) {
  double *tmp = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) tmp[i] = exp(0.1 * st[i]);
  k->scratch = tmp;
  double acc = 0;
  for (int i = 0; i < n; i++) acc += st[i] * tmp[(i + 1) % n] * tmp[(i + 1) % n];
  return acc;
}

/* returned: the caller writes it afterwards */
__attribute__((noinline)) double *made(double *st, int n) {
  double *tmp = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) tmp[i] = sqrt(1.0 + st[i] * st[i]);
  for (int i = 0; i < n; i++) st[i] = st[i] * tmp[i] * 0.4;
  return tmp;
}

/* passed to a callee that writes it after the load */
__attribute__((noinline)) void scale_all(double *p, int n, double c) {
  for (int i = 0; i < n; i++) p[i] *= c;
}
__attribute__((noinline)) void handed(double *st, int n) {
  double *tmp = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) tmp[i] = st[i] * st[i] + 0.5;
  double a = 0;
  for (int i = 0; i < n; i++) a += sin(tmp[i]);
  scale_all(tmp, n, 3.0);
  for (int i = 0; i < n; i++) st[i] = st[i] * 0.8 + 0.1 * a * tmp[i];
  free(tmp);
}

/* one block per iteration of a loop (the same SSA value, a different block each time) */
__attribute__((noinline)) void per_iteration(double *st, int n) {
  for (int r = 0; r < 2; r++) {
    double *tmp = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) tmp[i] = st[i] * (1.2 + r) + 0.1;
    for (int i = 0; i < n; i++) st[i] = st[i] * 0.5 + tmp[i] * tmp[(i + 2) % n] * 0.2;
    free(tmp);
  }
}

/* grown by realloc after the loads */
__attribute__((noinline)) void grown(double *st, int n) {
  double *tmp = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) tmp[i] = tanh(st[i]);
  double a = 0;
  for (int i = 0; i < n; i++) a += tmp[i] * st[i];
  tmp = realloc(tmp, 4 * n * sizeof(double));
  for (int i = 0; i < 4 * n; i++) tmp[i] = 0.25 * i;
  for (int i = 0; i < n; i++) st[i] = st[i] * 0.9 + 0.05 * a + 0.01 * tmp[3 * i];
  free(tmp);
}

/* an index array and a float array (no shadows: their frees run in the forward) */
__attribute__((noinline)) void gathered(double *st, int n) {
  int *idx = malloc(n * sizeof(int));
  float *w = calloc(n, sizeof(float));
  for (int i = 0; i < n; i++) { idx[i] = (3 * i + 1) % n; w[i] = 0.5f + 0.1f * (float)i; }
  double g[N];
  for (int i = 0; i < n; i++) g[i] = st[idx[i]] * st[idx[i]] * w[i];
  free(idx);
  for (int i = 0; i < n; i++) st[i] = st[i] * 0.6 + 0.3 * g[i];
  free(w);
}

/* scratch arrays rewritten by every pass of a repeat loop and read back by the next (LULESH's
   equation of state, evaluated several times per region): the reverse function puts the old
   values back (ad/synthesis/undo_stores.py) and re-reads the gathered ones */
__attribute__((noinline)) void repeated(double *st, int n) {
  double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) a[i] = st[i];
  for (int r = 0; r < 3; r++) {
    for (int i = 0; i < n; i++) b[i] = sin(a[i]) * a[(i + 1) % n] + 0.1 * r;
    for (int i = 0; i < n; i++) a[i] = a[i] * 0.5 + b[(i + 2) % n] * b[(i + 3) % n];
  }
  for (int i = 0; i < n; i++) st[i] = a[i] + 0.2 * st[i];
  free(a);
  free(b);
}

static struct keep kept;
double run(double *st0, int n) {
  double st[N];
  memcpy(st, st0, n * sizeof(double));
  double out = 0;
  for (int s = 0; s < S; s++) {
    phase(st, n);
    rewritten(st, n);
    double a = stored(st, n, &kept);
    for (int i = 0; i < n; i++) kept.scratch[i] = 100.0 + i;   /* after stored's forward */
    free(kept.scratch);
    for (int i = 0; i < n; i++) st[i] += 0.05 * a * st[i];
    double *m = made(st, n);
    for (int i = 0; i < n; i++) m[i] = -7.0;
    free(m);
    handed(st, n);
    per_iteration(st, n);
    grown(st, n);
    gathered(st, n);
    repeated(st, n);
    for (int i = 0; i < n; i++) out += st[i] * st[i] * (1 + 0.1 * i);
  }
  return out;
}

int main(void) {
  double x[N] = {0.3, -0.2, 0.5, 0.1, -0.4, 0.25}, dx[N] = {0};
  __enzyme_autodiff((void *)run, enzyme_dup, x, dx, enzyme_const, N);
  for (int k = 0; k < N; k++) {
    double xp[N], xm[N], h = 1e-6;
    memcpy(xp, x, sizeof x);
    memcpy(xm, x, sizeof x);
    xp[k] += h;
    xm[k] -= h;
    char name[32];
    snprintf(name, sizeof name, "d_run[%d]", k);
    check(name, dx[k], (run(xp, N) - run(xm, N)) / (2 * h));
  }
  /* forward mode in one direction against the gradient */
  double v[N] = {0.5, -1.0, 0.25, 0.75, -0.3, 1.2}, want = 0;
  for (int k = 0; k < N; k++) want += dx[k] * v[k];
  check("forward", __enzyme_fwddiff((void *)run, enzyme_dup, x, v, enzyme_const, N), want);
  return failed != 0;
}
