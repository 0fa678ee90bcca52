/* realloc of small buffers holding active data: grown right after a single element (the
   shadow must move with the data), in straight-line code and through a static helper that is
   inlined, and shrunk. Each gradient runs several times (stale shadow memory would show up in
   the later calls). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-5 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
static void checki(const char *name, int i, double got, double want) {
  char buf[64];
  snprintf(buf, sizeof buf, "%s[%d]", name, i);
  check(buf, got, want);
}
/* vector forward mode: lane k (entry i >= 0) of a width-N call versus a width-1 call */
static void checkv(const char *name, int lane, int i, double got, double want) {
  char buf[64];
  if (i < 0) snprintf(buf, sizeof buf, "vec_%s_%d", name, lane);
  else snprintf(buf, sizeof buf, "vec_%s_%d_%d", name, lane, i);
  check(buf, got, want);
}
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
int enzyme_dup, enzyme_const, enzyme_width, enzyme_dupv;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
typedef struct { double d[2]; } V2;
V2 __enzyme_fwddiff2(void *, ...) __asm__("__enzyme_fwddiff");
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }
static double dotp(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

double one_grow(double x) {
  double *a = malloc(sizeof(double));
  a[0] = x;
  a = realloc(a, 2 * sizeof(double));
  a[1] = 3 * a[0];
  double r = a[0] * a[1];           /* 3 x^2 */
  free(a);
  return r;
}

float one_grow_f(float x) {
  float *a = malloc(sizeof(float));
  a[0] = x;
  a = realloc(a, 3 * sizeof(float));
  float r = a[0] * 2;
  free(a);
  return r;
}

static double *resize(double *p, size_t n) { return realloc(p, n * sizeof *p); }

/* grown in straight-line code, only read afterwards; then shrunk through the inlined helper */
double straight(const double *x, int n) {
  double *b = malloc(2 * sizeof(double));
  b[0] = x[0] * x[1];
  b[1] = sin(x[2]);
  b = realloc(b, (size_t)n * sizeof(double));
  double s = b[0] * b[1] + b[1];
  b = resize(b, 1);
  s += b[0] * b[0];
  free(b);
  return s;
}

static double straight_fd(const double *x, int n, int i) {
  double xp[8], xm[8], h = 1e-6;
  for (int k = 0; k < n; k++) xp[k] = xm[k] = x[k];
  xp[i] += h;
  xm[i] -= h;
  return (straight(xp, n) - straight(xm, n)) / (2 * h);
}

typedef float (*ffn)(void *, float);

int main(void) {
  enum { N = 5 };
  double x[N] = {0.5, -1.25, 0.75, 2, 1};
  for (int call = 0; call < 3; call++) {
    double xs = 1.5 + call;
    check("one_grow", __enzyme_autodiff((void *)one_grow, xs), 6 * xs);
    check("dot_one_grow", __enzyme_fwddiff((void *)one_grow, xs, 1.0), 6 * xs);
    check("one_grow_f", ((ffn)__enzyme_autodiff)((void *)one_grow_f, (float)xs), 2);
    double dx[N] = {0};
    __enzyme_autodiff((void *)straight, enzyme_dup, x, dx, enzyme_const, N);
    for (int i = 0; i < N; i++) checki("straight", i, dx[i], straight_fd(x, N, i));
    double v[N];
    for (int i = 0; i < N; i++) v[i] = rnd(i + call);
    check("dot_straight", __enzyme_fwddiff((void *)straight, enzyme_dup, x, v, enzyme_const, N),
          dotp(v, dx, N));
  }
  return report();
}
