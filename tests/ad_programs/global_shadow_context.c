/* A model whose parameters live in globals (a struct with a count, an array reached through a
   descriptor, a heap buffer allocated before differentiating): the gradient with respect to
   them comes from the shadows of a context (__enzyme_context / __enzyme_shadow), zeroed before
   each gradient; forward mode reads tangents seeded in another context's shadows. */
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
static int report(void) {
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
typedef struct { double d[2]; } V2;
extern int enzyme_context;
void *__enzyme_context(int);
void *__enzyme_shadow(void *, void *, int);
void __enzyme_zero_shadows(void *);
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
V2 __enzyme_fwddiff2(void *, ...) __asm__("__enzyme_fwddiff");
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

enum { NC = 3, NH = 5 };
struct { int n; double bias; double gain; } model = {NC, 0.5, 1.5};
double coef[NC] = {0.3, -0.7, 1.1};
struct { double *base; long len; } view = {coef, NC};
double *hbuf;

__attribute__((noinline)) void setup(void) {
  hbuf = malloc(NH * sizeof(double));
  for (int i = 0; i < NH; i++) hbuf[i] = 0.2 * (i + 1);
}

__attribute__((noinline)) double poly(double x) {
  double s = 0, p = 1;
  for (long i = 0; i < view.len; i++) {
    s += view.base[i] * p;
    p *= x;
  }
  return s;
}

double loss(double x) {
  double h = 0;
  for (int i = 0; i < NH; i++) h += hbuf[i] * hbuf[i] * (i + x);
  return model.gain * sin(poly(x) + model.bias) + h / model.n;
}

/* every global parameter in one vector: bias, gain, coef[0..NC), hbuf[0..NH) */
enum { NP = 2 + NC + NH };
static double *param(int k) {
  return k == 0 ? &model.bias : k == 1 ? &model.gain : k < 2 + NC ? &coef[k - 2] : &hbuf[k - 2 - NC];
}
static double *shadow_param(void *ctx, int k, int lane) {
  if (k == 0) return __enzyme_shadow(ctx, &model.bias, lane);
  if (k == 1) return __enzyme_shadow(ctx, &model.gain, lane);
  if (k < 2 + NC) return (double *)__enzyme_shadow(ctx, &coef, lane) + (k - 2);
  return (*(double **)__enzyme_shadow(ctx, &hbuf, lane)) + (k - 2 - NC);
}

int main(void) {
  setup();
  const double x = 0.8, h = 1e-6;
  void *grad = __enzyme_context(1);
  check("count_copied", *(int *)__enzyme_shadow(grad, &model.n, 0), NC);
  double g[NP];
  for (int rep = 0; rep < 2; rep++) {          /* the second gradient starts from zero again */
    __enzyme_zero_shadows(grad);
    double dx = __enzyme_autodiff((void *)loss, enzyme_context, grad, x);
    check("dloss_dx", dx, (loss(x + h) - loss(x - h)) / (2 * h));
    for (int k = 0; k < NP; k++) {
      double *p = param(k), keep = *p;
      *p = keep + h;
      double up = loss(x);
      *p = keep - h;
      double down = loss(x);
      *p = keep;
      g[k] = *shadow_param(grad, k, 0);
      checki("dloss_dparam", k, g[k], (up - down) / (2 * h));
    }
  }
  /* forward mode: J v with v seeded in another context's shadows, against v . gradient */
  void *tan = __enzyme_context(1);
  double v[NP], dot = 0;
  for (int k = 0; k < NP; k++) {
    v[k] = rnd(k);
    *shadow_param(tan, k, 0) = v[k];
    dot += v[k] * g[k];
  }
  check("dot_params", __enzyme_fwddiff((void *)loss, enzyme_context, tan, x, 0.0), dot);
  /* two directions at once: a context of width 2, lane k seeded with direction k */
  void *tan2 = __enzyme_context(2);
  double dots[2] = {0, 0};
  for (int k = 0; k < NP; k++)
    for (int lane = 0; lane < 2; lane++) {
      double vk = rnd(NP * (lane + 1) + k);
      *shadow_param(tan2, k, lane) = vk;
      dots[lane] += vk * g[k];
    }
  V2 t2 = __enzyme_fwddiff2((void *)loss, enzyme_context, tan2, x, 0.0, 0.0);
  check("vec_dot_params_0", t2.d[0], dots[0]);
  check("vec_dot_params_1", t2.d[1], dots[1]);
  free(hbuf);
  return report();
}
