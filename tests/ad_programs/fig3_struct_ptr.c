/* Paper Figure 3: a struct with a double at offset 0, a pointer to doubles at offset 8 and a
   pointer to an int (the loop bound). The shadow struct points to the shadow array. */
#include <math.h>
#include <stdio.h>
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
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
int enzyme_dup;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random direction entries */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

struct MyType {
  double scale;
  double *y;
  int *n;
};

/* f = sum_i scale * y_i + sin(y_i) */
double f(const struct MyType *s) {
  double r = 0;
  for (int i = 0; i < *s->n; i++) r += s->scale * s->y[i] + sin(s->y[i]);
  return r;
}

int main(void) {
  int n = 3;
  double y[3] = {0.5, -1, 2}, dy[3] = {0};
  struct MyType s = {1.5, y, &n}, ds = {0, dy, &n};
  __enzyme_autodiff((void *)f, enzyme_dup, &s, &ds);
  check("d_scale", ds.scale, y[0] + y[1] + y[2]);
  for (int i = 0; i < 3; i++) checki("d_y", i, dy[i], s.scale + cos(y[i]));
  /* forward/reverse dot test: the tangent along a direction (vscale, vy) equals it . gradient */
  double vy[3];
  struct MyType vs = {rnd(3), vy, &n};
  double vg = vs.scale * ds.scale;
  for (int i = 0; i < 3; i++) { vy[i] = rnd(i); vg += vy[i] * dy[i]; }
  check("dot_f", __enzyme_fwddiff((void *)f, enzyme_dup, &s, &vs), vg);
  return report();
}
