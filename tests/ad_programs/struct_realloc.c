/* A realloc'd array of structs with an array member, an int beside a float and a pointer:
   the realloc moves the records' adjoints field by field, by the layout of the copies into the
   block (b[0] = s[0]; ...), whose !tbaa.struct leaves the array member untyped; the pieces of
   the copies SROA makes (an i64 holding the int and the float) are float data. Reverse mode
   against analytic values, forward mode against reverse. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
static int failed;
static void check(const char *name, int i, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1.0 + fabs(want));
  printf("CHECK %s[%d] %.12g %.12g%s\n", name, i, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

typedef struct { double a[2]; int id; float w; double *p; } R;
double grow(R *s) {
  R *b = malloc(2 * sizeof(R));
  b[0] = s[0];
  b[1] = s[1];
  b = realloc(b, 4 * sizeof(R));
  for (int k = 2; k < 4; k++) b[k] = b[3 - k];
  double r = 0;
  for (int k = 0; k < 4; k++) r += (k + 1) * b[k].a[1] * (double)b[k].w + b[k].id * *b[k].p;
  free(b);
  return r;
}

int main(void) {
  double q[2] = {1.5, -0.5}, dq2[2] = {0, 0};
  R rs[2] = {{{0.5, 1.25}, 3, 0.75f, &q[0]}, {{2.0, -1.5}, 2, 1.5f, &q[1]}}, drs[2] = {0};
  drs[0].p = &dq2[0];
  drs[1].p = &dq2[1];
  __enzyme_autodiff((void *)grow, enzyme_dup, rs, drs);
  /* b = [s0, s1, s1, s0]: weights (k + 1) are 1 + 4 for s0 and 2 + 3 for s1 */
  check("grow.a1", 0, drs[0].a[1], 5 * 0.75, 1e-12);
  check("grow.a1", 1, drs[1].a[1], 5 * 1.5, 1e-12);
  check("grow.w", 0, drs[0].w, 5 * 1.25, 1e-6);
  check("grow.w", 1, drs[1].w, 5 * -1.5, 1e-6);
  check("grow.p", 0, dq2[0], 2 * 3, 1e-12);
  check("grow.p", 1, dq2[1], 2 * 2, 1e-12);
  double tq[2] = {0.25, -1.0};
  R ts[2] = {{{0.1, 0.2}, 0, 0.5f, &tq[0]}, {{-0.3, 0.4}, 0, -0.25f, &tq[1]}};
  double jt = __enzyme_fwddiff((void *)grow, enzyme_dup, rs, ts);
  double dot = 0;
  for (int k = 0; k < 2; k++)
    dot += ts[k].a[0] * drs[k].a[0] + ts[k].a[1] * drs[k].a[1] + ts[k].w * drs[k].w + tq[k] * dq2[k];
  check("forward.dot", 0, jt, dot, 1e-6);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
