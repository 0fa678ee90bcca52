/* Allocation through function pointers kept in a global struct initialised to malloc and free
   (an allocator table, as in Enzyme's metamalloc test): the calls resolve to malloc/free, so the
   buffer of active data gets a shadow. */
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

struct allocator {
  int count;
  void *(*alloc)(size_t);
  void (*dealloc)(void *);
};
struct allocator table = {0, malloc, free};

__attribute__((noinline)) void *table_alloc(size_t n) { return table.alloc(n); }

double via_table(double x) {
  double *m = table_alloc(2 * sizeof(double));
  double *k = table.alloc(sizeof(double));
  m[0] = x;
  m[1] = x * x;
  k[0] = sin(m[1]);
  double r = m[0] * m[1] + k[0];
  table.dealloc(k);
  table.dealloc(m);
  return r;      /* x^3 + sin(x^2) */
}

int main(void) {
  for (int call = 0; call < 3; call++) {
    double x = 0.5 + 0.75 * call, want = 3 * x * x + 2 * x * cos(x * x);
    check("via_table", __enzyme_autodiff((void *)via_table, x), want);
    check("dot_via_table", __enzyme_fwddiff((void *)via_table, x, 1.0), want);
  }
  return report();
}
