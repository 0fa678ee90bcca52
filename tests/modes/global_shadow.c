/* Shadows of globals (Enzyme's __enzyme_shadow / __enzyme_context / __enzyme_zero_shadows):
   the default shadows of each width, contexts with shadows of their own, zeroing in a loop, a
   descriptor pointing at a global array, a heap buffer allocated before the derivative. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { double d1, d2; } Pair;
extern void *__enzyme_context(int);
/* __enzyme_shadow(&g, width, lane): the default shadows; (ctx, &g, lane): a context's */
extern void *shadow_default(void *, int, int) __asm__("__enzyme_shadow");
extern void *__enzyme_shadow(void *, void *, int);
extern void __enzyme_zero_shadows(void *);
extern double __enzyme_autodiff(void *, ...);
extern double __enzyme_fwddiff(void *, ...);
extern Pair __enzyme_fwddiff2(void *, ...) __asm__("__enzyme_fwddiff");
extern int enzyme_context, enzyme_width;

double g = 2.0;
struct { double a, b; } blk = {1.0, 3.0};
double scale = 2.0, weights[2] = {3.0, 5.0}, hidden = 7.0;
double data[3] = {1.0, 2.0, 3.0};
struct { double *base; long size; } desc = {data, 3};
double *buf;
struct { char tag; double v; long n; } rec = {'a', 2.0, 5};
unsigned char raw[16];   /* untyped storage holding a double at byte 8 */

double f(double x) { return g * x * x + blk.b * x; }
double loss(double x) { return scale * (weights[0] + weights[1]) * x * x + hidden * x; }
__attribute__((noinline)) double sum(double x) {
  double s = 0;
  for (long i = 0; i < desc.size; i++) s += desc.base[i] * x;
  return s;
}
double energy(double x) {
  double s = 0;
  for (int i = 0; i < 8; i++) s += buf[i] * buf[i] * x;
  return s;
}
__attribute__((noinline)) double raw_value(void) {
  double r;
  memcpy(&r, raw + 8, sizeof r);
  return r;
}
double mixed(double x) { return rec.v * x * rec.n + raw_value() * x; }
__attribute__((noinline)) void init(void) {
  buf = aligned_alloc(64, 8 * sizeof(double));
  for (int i = 0; i < 8; i++) buf[i] = i + 1;
}

static void show(const char *what, double got, double want) {
  printf("%-34s %.12g | %.12g\n", what, got, want);
}

int main(void) {
  /* the default shadows of width 1: reverse accumulates, forward reads the seeds */
  double *dg = (double *)shadow_default(&g, 1, 0);
  double *db = (double *)shadow_default(&blk.b, 1, 0);
  *dg = 0.0;
  *db = 0.0;
  show("default: df/dx", __enzyme_autodiff((void *)f, 3.0), 2 * 2.0 * 3.0 + 3.0);
  show("default: df/dg", *dg, 9.0);
  show("default: df/dblk.b", *db, 3.0);
  show("default: accumulates", (__enzyme_autodiff((void *)f, 3.0), *dg), 18.0);
  *dg = 1.0;
  *db = 0.0;
  show("default: forward dg=1", __enzyme_fwddiff((void *)f, 3.0, 0.0), 9.0);
  /* width 2 has its own shadows, one per lane */
  double *dg0 = (double *)shadow_default(&g, 2, 0), *dg1 = (double *)shadow_default(&g, 2, 1);
  double *db0 = (double *)shadow_default(&blk.b, 2, 0), *db1 = (double *)shadow_default(&blk.b, 2, 1);
  show("default: width-2 lanes differ", dg0 != dg1 && dg0 != dg, 1.0);
  *dg0 = 1.0; *dg1 = 0.0; *db0 = 0.0; *db1 = 1.0;
  Pair t2 = __enzyme_fwddiff2((void *)f, enzyme_width, 2, 3.0, 0.0, 0.0);
  show("default: width 2 lane 0", t2.d1, 9.0);
  show("default: width 2 lane 1", t2.d2, 3.0);
  show("default: width 1 unchanged", *dg, 1.0);

  /* a context zeroed before each gradient of a loop (hidden is never queried in the loop) */
  void *ctx = __enzyme_context(1);
  double *dscale = (double *)__enzyme_shadow(ctx, (void *)&scale, 0);
  double *dw = (double *)__enzyme_shadow(ctx, (void *)&weights, 0);
  for (int i = 1; i <= 3; i++) {
    double x = i;
    __enzyme_zero_shadows(ctx);
    show("loop: dloss/dx", __enzyme_autodiff((void *)loss, enzyme_context, ctx, x), 2 * 2.0 * 8.0 * x + 7.0);
    show("loop: dloss/dscale", *dscale, 8.0 * x * x);
    show("loop: dloss/dw0", dw[0], 2.0 * x * x);
    show("loop: dloss/dw1", dw[1], 2.0 * x * x);
  }
  show("loop: dloss/dhidden (never queried)", *(double *)__enzyme_shadow(ctx, (void *)&hidden, 0), 3.0);

  /* two contexts: independent shadows, and neither touches the default ones */
  void *c1 = __enzyme_context(1), *c2 = __enzyme_context(1);
  double *g1 = (double *)__enzyme_shadow(c1, (void *)&g, 0), *g2 = (double *)__enzyme_shadow(c2, (void *)&g, 0);
  show("contexts: fresh shadow is zero", *g1 + *g2, 0.0);
  *g1 = 1.0;
  show("contexts: forward c1 (dg=1)", __enzyme_fwddiff((void *)f, enzyme_context, c1, 3.0, 0.0), 9.0);
  show("contexts: forward c2 (dg=0)", __enzyme_fwddiff((void *)f, enzyme_context, c2, 3.0, 0.0), 0.0);
  __enzyme_autodiff((void *)f, enzyme_context, c2, 3.0);
  show("contexts: reverse into c2", *g2, 9.0);
  show("contexts: c1 unchanged", *g1, 1.0);
  show("contexts: default unchanged", *dg, 1.0);

  /* a descriptor pointing at a global array: the shadow descriptor points at the array's shadow */
  void *cd = __enzyme_context(1);
  double **dbase = (double **)__enzyme_shadow(cd, (void *)&desc.base, 0);
  long *dsize = (long *)__enzyme_shadow(cd, (void *)&desc.size, 0);
  double *ddata = (double *)__enzyme_shadow(cd, (void *)&data, 0);
  show("descriptor: size copied", (double)*dsize, 3.0);
  show("descriptor: base -> shadow data", *dbase == ddata, 1.0);
  ddata[0] = 1.0;
  ddata[2] = 1.0;
  show("descriptor: forward", __enzyme_fwddiff((void *)sum, enzyme_context, cd, 2.0, 0.0), 4.0);
  __enzyme_zero_shadows(cd);
  show("descriptor: zeroed", ddata[0] + ddata[2], 0.0);
  show("descriptor: reverse d/dx", __enzyme_autodiff((void *)sum, enzyme_context, cd, 2.0), 6.0);
  show("descriptor: reverse d/ddata[1]", ddata[1], 2.0);
  void *cw = __enzyme_context(2);
  double **dbase1 = (double **)__enzyme_shadow(cw, (void *)&desc.base, 1);
  double *wd0 = (double *)__enzyme_shadow(cw, (void *)&data, 0), *wd1 = (double *)__enzyme_shadow(cw, (void *)&data, 1);
  show("descriptor: width-2 lane 1 base", *dbase1 == wd1, 1.0);
  wd0[1] = 1.0;
  wd1[2] = 1.0;
  Pair s2 = __enzyme_fwddiff2((void *)sum, enzyme_context, cw, 2.0, 0.0, 0.0);
  show("descriptor: width 2 lane 0", s2.d1, 2.0);
  show("descriptor: width 2 lane 1", s2.d2, 2.0);

  /* a heap buffer allocated before the derivative: its shadow is a zeroed block of that size */
  init();
  void *ch = __enzyme_context(1);
  double **dbuf = (double **)__enzyme_shadow(ch, (void *)&buf, 0);
  show("heap: shadow is another block", *dbuf != buf && *dbuf != 0, 1.0);
  for (int j = 1; j <= 2; j++) {
    double x = j;
    __enzyme_zero_shadows(ch);
    show("heap: denergy/dx", __enzyme_autodiff((void *)energy, enzyme_context, ch, x), 204.0);
    show("heap: denergy/dbuf[0]", (*dbuf)[0], 2.0 * x);
    show("heap: denergy/dbuf[7]", (*dbuf)[7], 16.0 * x);
  }
  __enzyme_zero_shadows(ch);
  for (int i = 0; i < 8; i++) (*dbuf)[i] = 1.0;
  show("heap: forward", __enzyme_fwddiff((void *)energy, enzyme_context, ch, 2.0, 0.0), 72.0 * 2.0);
  free(buf);

  /* a struct with char and long fields, and bytes holding a double read in a callee */
  double r0 = 1.5;
  memcpy(raw + 8, &r0, sizeof r0);
  void *cm = __enzyme_context(1);
  double *dv = (double *)__enzyme_shadow(cm, &rec.v, 0);
  long *dn = (long *)__enzyme_shadow(cm, &rec.n, 0);
  unsigned char *draw = (unsigned char *)__enzyme_shadow(cm, &raw, 0);
  show("mixed: long field copied", (double)*dn, 5.0);
  for (int j = 0; j < 2; j++) {
    double dr;
    __enzyme_zero_shadows(cm);
    show("mixed: dmixed/dx", __enzyme_autodiff((void *)mixed, enzyme_context, cm, 3.0), 2.0 * 5 + 1.5);
    memcpy(&dr, draw + 8, sizeof dr);
    show("mixed: dmixed/drec.v", *dv, 15.0);
    show("mixed: dmixed/draw (bytes)", dr, 3.0);
  }
  return 0;
}
