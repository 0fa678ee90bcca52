/* A tiny MLP layer h = tanh(W x + b), loss = sum (h - t)^2; gradient with respect to W, b, x
   compared with central finite differences. */
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
#define IN 3
#define OUT 2
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

double layer_loss(const double *W, const double *b, const double *x, const double *t) {
  double loss = 0;
  for (int o = 0; o < OUT; o++) {
    double z = b[o];
    for (int i = 0; i < IN; i++) z += W[o * IN + i] * x[i];
    double h = tanh(z);
    loss += (h - t[o]) * (h - t[o]);
  }
  return loss;
}

static double fd(double *v, const double *W, const double *b, const double *x, const double *t) {
  const double h = 1e-6, old = *v;
  *v = old + h;
  double fp = layer_loss(W, b, x, t);
  *v = old - h;
  double fm = layer_loss(W, b, x, t);
  *v = old;
  return (fp - fm) / (2 * h);
}

int main(void) {
  double W[OUT * IN] = {0.5, -0.3, 0.8, 0.1, 0.7, -0.6}, b[OUT] = {0.1, -0.2};
  double x[IN] = {1.0, -0.5, 0.25}, t[OUT] = {0.3, -0.1};
  double dW[OUT * IN] = {0}, db[OUT] = {0}, dx[IN] = {0};
  __enzyme_autodiff((void *)layer_loss, enzyme_dup, W, dW, enzyme_dup, b, db, enzyme_dup, x, dx,
                    enzyme_const, t);
  for (int k = 0; k < OUT * IN; k++) checki("dW", k, dW[k], fd(&W[k], W, b, x, t));
  for (int k = 0; k < OUT; k++) checki("db", k, db[k], fd(&b[k], W, b, x, t));
  for (int k = 0; k < IN; k++) checki("dx", k, dx[k], fd(&x[k], W, b, x, t));
  /* forward tangent along (vW, vb, vx) versus its dot with the reverse gradient */
  double vW[OUT * IN], vb[OUT], vx[IN];
  for (int k = 0; k < OUT * IN; k++) vW[k] = rnd(k);
  for (int k = 0; k < OUT; k++) vb[k] = rnd(OUT * IN + k);
  for (int k = 0; k < IN; k++) vx[k] = rnd(OUT * IN + OUT + k);
  check("dot_layer_loss",
        __enzyme_fwddiff((void *)layer_loss, enzyme_dup, W, vW, enzyme_dup, b, vb,
                         enzyme_dup, x, vx, enzyme_const, t),
        dotp(vW, dW, OUT * IN) + dotp(vb, db, OUT) + dotp(vx, dx, IN));
  /* vector forward mode: 2 directions, W by dupv, b and x by dup, versus 2 width-1 calls */
  double vW2[2][OUT * IN], vb2[2][OUT], vx2[2][IN];
  for (int k = 0; k < 2; k++) {
    for (int i = 0; i < OUT * IN; i++) vW2[k][i] = rnd(20 + 20 * k + i);
    for (int i = 0; i < OUT; i++) vb2[k][i] = rnd(30 + 20 * k + i);
    for (int i = 0; i < IN; i++) vx2[k][i] = rnd(35 + 20 * k + i);
  }
  V2 t2 = __enzyme_fwddiff2((void *)layer_loss, enzyme_width, 2, enzyme_dupv, sizeof vW2[0], W, vW2,
                            enzyme_dup, b, vb2[0], vb2[1], enzyme_dup, x, vx2[0], vx2[1], enzyme_const, t);
  for (int k = 0; k < 2; k++)
    checkv("layer_loss", k, -1, t2.d[k],
           __enzyme_fwddiff((void *)layer_loss, enzyme_dup, W, vW2[k], enzyme_dup, b, vb2[k],
                            enzyme_dup, x, vx2[k], enzyme_const, t));
  return report();
}
