/* Struct assignment (a memcpy of mixed int/double fields) inside the differentiated function. */
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
int enzyme_dup, enzyme_const, enzyme_width;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
typedef struct { double d[4]; } V4;
V4 __enzyme_fwddiff4(void *, ...) __asm__("__enzyme_fwddiff");
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

struct Body { int id; double mass; double pos[3]; int flags; };

double copied(const struct Body *in, int n) {
  struct Body local[4];
  for (int i = 0; i < n; i++) local[i] = in[i];
  double e = 0;
  for (int i = 0; i < n; i++)
    e += local[i].mass * (local[i].pos[0] * local[i].pos[0] + local[i].pos[1] * local[i].pos[2]);
  return e;
}

int main(void) {
  struct Body b[3] = {{1, 2.0, {0.5, 1, 2}, 0}, {2, 1.5, {-1, 0.5, 0.25}, 3}, {3, 0.5, {2, -1, 1}, 1}};
  struct Body db[3] = {{0}};
  for (int i = 0; i < 3; i++) db[i].id = b[i].id, db[i].flags = b[i].flags;
  __enzyme_autodiff((void *)copied, enzyme_dup, b, db, enzyme_const, 3);
  for (int i = 0; i < 3; i++) {
    const double *p = b[i].pos;
    checki("dmass", i, db[i].mass, p[0] * p[0] + p[1] * p[2]);
    checki("dpos0", i, db[i].pos[0], 2 * b[i].mass * p[0]);
    checki("dpos1", i, db[i].pos[1], b[i].mass * p[2]);
    checki("dpos2", i, db[i].pos[2], b[i].mass * p[1]);
  }
  /* forward tangent along tb versus its dot with the reverse gradient db */
  struct Body tb[3];
  double tg = 0;
  for (int i = 0; i < 3; i++) {
    tb[i] = b[i];   /* int fields as in the primal */
    tb[i].mass = rnd(4 * i);
    tg += tb[i].mass * db[i].mass;
    for (int k = 0; k < 3; k++) {
      tb[i].pos[k] = rnd(4 * i + 1 + k);
      tg += tb[i].pos[k] * db[i].pos[k];
    }
  }
  check("dot_copied", __enzyme_fwddiff((void *)copied, enzyme_dup, b, tb, enzyme_const, 3), tg);
  /* vector forward mode: 4 shadow arrays of structs (dup) versus 4 width-1 calls */
  struct Body t4[4][3];
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < 3; i++) {
      t4[k][i] = b[i];
      t4[k][i].mass = rnd(20 + 16 * k + 4 * i);
      for (int j = 0; j < 3; j++) t4[k][i].pos[j] = rnd(21 + 16 * k + 4 * i + j);
    }
  V4 r4 = __enzyme_fwddiff4((void *)copied, enzyme_width, 4, enzyme_dup, b, t4[0], t4[1], t4[2], t4[3],
                            enzyme_const, 3);
  for (int k = 0; k < 4; k++)
    checkv("copied", k, -1, r4.d[k], __enzyme_fwddiff((void *)copied, enzyme_dup, b, t4[k], enzyme_const, 3));
  return report();
}
