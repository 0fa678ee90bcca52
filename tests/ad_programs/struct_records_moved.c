/* Records moved by realloc and by a memcpy of several records, where the function reads only
   the double fields of the block (in a loop, so no typed access names the other fields): the
   layout comes from the copies of single records into the block before the realloc. The last
   record's tail is overwritten after the copy, so LLVM shortens the memcpy (its struct tag
   kept); the record has padding after its float. Reverse mode against analytic values,
   forward mode against reverse. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int failed;
static void check(const char *name, int i, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1.0 + fabs(want));
  printf("CHECK %s[%d] %.12g %.12g%s\n", name, i, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

typedef struct { int id; double x; float w; double *p; double v[2]; } R;
double moved(R *s, int n) {
  R *b = malloc(2 * sizeof(R));
  b[0] = s[0];
  b[1] = s[1];
  b = realloc(b, 4 * sizeof(R));
  memcpy(&b[2], b, 2 * sizeof(R));          /* b = [s0, s1, s0, s1] */
  b[3].v[1] = 3.0 * b[3].x;
  double r = 0;
  for (int k = 0; k < n; k++) r += b[k].v[1] * b[k].v[1];
  free(b);
  return r + (double)s[0].w * *s[1].p;
}

int main(void) {
  double q[2] = {1.5, -0.5}, dq[2] = {0, 0};
  R rs[2] = {{3, 0.5, 0.75f, &q[0], {0.25, 1.25}}, {2, -0.7, 1.5f, &q[1], {2.0, -1.5}}};
  R drs[2] = {{0, 0, 0, &dq[0], {0, 0}}, {0, 0, 0, &dq[1], {0, 0}}};
  __enzyme_autodiff((void *)moved, enzyme_dup, rs, drs, enzyme_const, 4);
  /* r = 2 s0.v1^2 + s1.v1^2 + 9 s1.x^2 + s0.w q1 */
  check("moved.v1", 0, drs[0].v[1], 4 * 1.25, 1e-12);
  check("moved.v1", 1, drs[1].v[1], 2 * -1.5, 1e-12);
  check("moved.x", 0, drs[0].x, 0, 1e-12);
  check("moved.x", 1, drs[1].x, 18 * -0.7, 1e-12);
  check("moved.v0", 0, drs[0].v[0] + drs[1].v[0], 0, 1e-12);
  check("moved.w", 0, drs[0].w, -0.5, 1e-6);
  check("moved.w", 1, drs[1].w, 0, 1e-6);
  check("moved.p", 1, dq[1], 0.75, 1e-12);
  double tq[2] = {0.25, -1.0};
  R ts[2] = {{0, 0.3, 0.5f, &tq[0], {0.1, 0.2}}, {0, -0.2, -0.25f, &tq[1], {-0.3, 0.4}}};
  double jt = __enzyme_fwddiff((void *)moved, enzyme_dup, rs, ts, enzyme_const, 4);
  double dot = 0;
  for (int k = 0; k < 2; k++)
    dot += ts[k].x * drs[k].x + ts[k].v[0] * drs[k].v[0] + ts[k].v[1] * drs[k].v[1] +
           ts[k].w * drs[k].w + tq[k] * dq[k];
  check("forward.dot", 0, jt, dot, 1e-6);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
