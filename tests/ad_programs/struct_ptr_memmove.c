/* An array of records holding pointers, shifted by one record with memmove (as an insertion
   sort or a queue does): source and destination overlap, so each record's pointer must reach
   its destination before the record behind it overwrites its source. The shadows of the
   pointers travel like the pointers (the forward sweep reads every moved field before it
   writes any); the gradient flows through them into q. Reverse mode against analytic values,
   forward mode against reverse. */
#include <math.h>
#include <stdio.h>
#include <string.h>
static int failed;
static void check(const char *name, int i, double got, double want) {
  int ok = fabs(got - want) <= 1e-12 * (1.0 + fabs(want));
  printf("CHECK %s[%d] %.12g %.12g%s\n", name, i, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

typedef struct { double a; int k; double *p; } S;

/* v = [r0 r1 r2 r3] with r_i = {x (i+1), i, q + i}; shifted: [r0 r0 r1 r2];
   result: sum_i a_i * k_i * p_i[0] over the shifted array, with record 0's k set to 5 */
__attribute__((noinline)) double shifted(double x, double *q, int n) {
  S v[4];
  for (int i = 0; i < 4; i++) v[i] = (S){x * (i + 1), i, q + i};
  memmove(&v[1], &v[0], 3 * sizeof(S));     /* a constant size: field by field */
  v[0].k = 5;
  double s = 0;
  for (int i = 0; i < n; i++) s += v[i].a * v[i].k * v[i].p[0];
  return s;
}

int main(void) {
  double x = 1.5, q[4] = {2.0, 3.0, 5.0, 7.0}, dq[4] = {0};
  /* shifted records: (a, k, p) = (x, 5, q0), (x, 0, q0), (2x, 1, q1), (3x, 2, q2) */
  double want_q[4] = {5 * x, 2 * x, 6 * x, 0};
  double want_x = 5 * q[0] + 2 * q[1] + 6 * q[2];
  __enzyme_autodiff((void *)shifted, x, enzyme_dup, q, dq, enzyme_const, 4);
  for (int i = 0; i < 4; i++) check("dq_reverse", i, dq[i], want_q[i]);
  double zero[4] = {0};
  double dx = __enzyme_fwddiff((void *)shifted, x, 1.0, enzyme_dup, q, zero, enzyme_const, 4);
  check("dx_forward", 0, dx, want_x);
  for (int i = 0; i < 4; i++) {
    double tq[4] = {0};
    tq[i] = 1.0;
    double t = __enzyme_fwddiff((void *)shifted, x, 0.0, enzyme_dup, q, tq, enzyme_const, 4);
    check("dq_forward", i, t, want_q[i]);
  }
  return failed != 0;
}
