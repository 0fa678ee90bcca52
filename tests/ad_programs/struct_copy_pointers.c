/* Copying a struct that holds a double and pointers to active arrays (the Figure 3 type):
   the copy must carry the shadow pointers into the shadow copy. */
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
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

struct View { double scale; double *data; int n; double *weights; };

__attribute__((noinline)) static double apply(struct View v) {
  double s = 0;
  for (int i = 0; i < v.n; i++) s += v.scale * v.data[i] * v.data[i] * v.weights[i];
  return s;
}

double via_copy(const struct View *in) {
  struct View local = *in;
  local.n -= 1;                 /* drop the last element */
  return apply(local) + apply(*in);
}

int main(void) {
  double data[4] = {0.5, -1, 2, 1.5}, w[4] = {1, 2, 3, 4};
  double ddata[4] = {0}, dw[4] = {0};
  struct View v = {1.5, data, 4, w}, dv = {0, ddata, 4, dw};
  __enzyme_autodiff((void *)via_copy, enzyme_dup, &v, &dv);
  double dscale = 0;
  for (int i = 0; i < 4; i++) {
    int times = i < 3 ? 2 : 1;
    checki("ddata", i, ddata[i], times * v.scale * 2 * data[i] * w[i]);
    checki("dw", i, dw[i], times * v.scale * data[i] * data[i]);
    dscale += times * data[i] * data[i] * w[i];
  }
  check("dscale", dv.scale, dscale);
  /* forward tangent along tv versus its dot with the reverse gradient dv */
  double tdata[4], tw[4];
  struct View tv = {rnd(0), tdata, 4, tw};
  double tg = tv.scale * dv.scale;
  for (int i = 0; i < 4; i++) {
    tdata[i] = rnd(1 + i), tw[i] = rnd(5 + i);
    tg += tdata[i] * ddata[i] + tw[i] * dw[i];
  }
  check("dot_via_copy", __enzyme_fwddiff((void *)via_copy, enzyme_dup, &v, &tv), tg);
  return report();
}
