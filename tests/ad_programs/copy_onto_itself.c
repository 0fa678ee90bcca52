// A copy whose source and destination are the same memory: a struct assigned to itself (the
// in-place compaction `t[m++] = t[k]` with m == k) and an in-place step `step(&s, &s)` whose
// callee starts with `*out = *in`. clang makes both an llvm.memcpy onto itself, which C and LLVM
// allow. Its adjoint added the destination's adjoint into the source's and then zeroed the
// destination's: the same memory, so the adjoint was lost (reverse mode gave 0).
// compact: keeps records with key >= 0 in place, s = sum_j v_j^2 (j + 1) over the kept ones.
// run: n steps of u <- u - dt u^2 on each component: du_n/du_0 = prod_k (1 - 2 dt u_k).
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-12 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

typedef struct { int key; double v; double w; } rec;

double compact(const double *x, int n) {
  rec t[8];
  for (int i = 0; i < n; i++) {
    t[i].key = (i % 3 == 1) ? -1 : i;           /* records 1 and 4 are dropped */
    t[i].v = x[i];
    t[i].w = 2 * x[i];
  }
  int m = 0;
  for (int k = 0; k < n; k++)
    if (t[k].key >= 0) t[m++] = t[k];           /* m == k until the first dropped record */
  double s = 0;
  for (int j = 0; j < m; j++) s += t[j].v * t[j].w * 0.5 * (j + 1);
  return s;
}

typedef struct { double u[4]; double t; } state;

__attribute__((noinline)) static void step(const state *in, state *out, double dt) {
  *out = *in;
  for (int i = 0; i < 4; i++) out->u[i] -= dt * out->u[i] * out->u[i];
  out->t += dt;
}

double run(const double *u0, int n) {
  state s = {{u0[0], u0[1], u0[2], u0[3]}, 0.0};
  for (int k = 0; k < n; k++) step(&s, &s, 0.1);
  return s.u[0] + 2 * s.u[1] + 3 * s.u[2] + 4 * s.u[3];
}

int main(void) {
  double x[6] = {0.5, 1.5, -0.7, 1.1, 2.0, 0.3}, dx[6] = {0};
  __enzyme_autodiff((void *)compact, enzyme_dup, x, dx, enzyme_const, 6);
  int slot[6] = {1, 0, 2, 3, 0, 4};             /* kept position + 1 of each record, 0: dropped */
  for (int i = 0; i < 6; i++) {
    char name[16];
    snprintf(name, sizeof name, "compact_%d", i);
    check(name, dx[i], slot[i] ? 2 * x[i] * slot[i] : 0.0);
  }
  double u0[4] = {1, 0.5, 0.25, 2}, du[4] = {0};
  __enzyme_autodiff((void *)run, enzyme_dup, u0, du, enzyme_const, 3);
  for (int i = 0; i < 4; i++) {
    double u = u0[i], d = 1;
    for (int k = 0; k < 3; k++) { d *= 1 - 0.2 * u; u -= 0.1 * u * u; }
    double e[4] = {0}, want = (i + 1) * d;
    e[i] = 1;
    char name[16];
    snprintf(name, sizeof name, "step_%d", i);
    check(name, du[i], want);
    snprintf(name, sizeof name, "step_fwd_%d", i);
    check(name, __enzyme_fwddiff((void *)run, enzyme_dup, u0, e, enzyme_const, 3), want);
  }
  return failed;
}
