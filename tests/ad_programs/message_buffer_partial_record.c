/* A buffer of records {double x; int k, pad;} on one path and of every other double on the
   other, copied by run-time length: the doubles' copy ends inside a record (15 doubles, 7.5
   records), and the field in that last, partial record carries its adjoint too (the records'
   adjoint helper skipped a partial record: the last double's adjoint was lost). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-9 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

typedef struct { double x; int k, pad; } Rec;
enum { N = 8 };
static volatile int count = N;      /* a run-time count: the copy's length is not a constant */

static void transfer(const char *from, char *to, long len) { memcpy(to, from, len); }

/* records: sum (i + 1) i v_i;  doubles: sum (i + 1) v_i */
double weighted(const double *v, int records) {
  int n = count;
  char *a = malloc(N * sizeof(Rec)), *b = malloc(N * sizeof(Rec));
  long len;
  if (records) {
    for (int i = 0; i < n; i++) { ((Rec *)a)[i].x = v[i]; ((Rec *)a)[i].k = i; }
    len = n * (long)sizeof(Rec);
  } else {
    for (int i = 0; i < n; i++) ((double *)a)[2 * i] = v[i];
    len = (2 * n - 1) * (long)sizeof(double);
  }
  transfer(a, b, len);
  double s = 0;
  for (int i = 0; i < n; i++)
    s += (i + 1) * (records ? ((Rec *)b)[i].x * ((Rec *)b)[i].k : ((double *)b)[2 * i]);
  free(a);
  free(b);
  return s;
}

int main(void) {
  double v[N], dv[N], t[N];
  char name[32];
  for (int i = 0; i < N; i++) { v[i] = 1.0 + 0.5 * i; t[i] = rnd(i); }
  for (int records = 0; records < 2; records++) {
    memset(dv, 0, sizeof dv);
    __enzyme_autodiff((void *)weighted, enzyme_dup, v, dv, enzyme_const, records);
    double jt = 0;
    for (int i = 0; i < N; i++) {
      snprintf(name, sizeof name, "%s_dv[%d]", records ? "records" : "doubles", i);
      check(name, dv[i], (i + 1) * (records ? i : 1));
      jt += dv[i] * t[i];
    }
    double jv = __enzyme_fwddiff((void *)weighted, enzyme_dup, v, t, enzyme_const, records);
    check(records ? "records_forward_dot" : "doubles_forward_dot", jv, jt);
  }
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
