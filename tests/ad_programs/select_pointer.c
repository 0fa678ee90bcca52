/* Selecting between pointers (select and phi of pointers): the shadow pointer must follow. */
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
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
/* deterministic pseudo-random directions for the forward/reverse dot-product tests */
static double rnd(int k) { return sin(1.3 + 7.1 * k); }

double pick_larger(double *a, double *b) {
  double *p = (*a > *b) ? a : b;
  return 3 * *p * *p + *a;
}

/* pointer to the largest element, found by a loop (a phi of pointers) */
double max_sq(double *x, int n) {
  double *m = x;
  for (int i = 1; i < n; i++)
    if (x[i] > *m) m = &x[i];
  return *m * *m;
}

int main(void) {
  double a = 2, b = 1, da = 0, db = 0;
  __enzyme_autodiff((void *)pick_larger, &a, &da, &b, &db);
  check("a_larger_da", da, 6 * a + 1);
  check("a_larger_db", db, 0);
  /* forward tangent along (ta, tb) versus its dot with the reverse gradient */
  double ta = rnd(0), tb = rnd(1);
  check("dot_a_larger", __enzyme_fwddiff((void *)pick_larger, &a, &ta, &b, &tb), ta * da + tb * db);
  a = 0.5; da = 0; db = 0;
  __enzyme_autodiff((void *)pick_larger, &a, &da, &b, &db);
  check("b_larger_da", da, 1);
  check("b_larger_db", db, 6 * b);
  check("dot_b_larger", __enzyme_fwddiff((void *)pick_larger, &a, &ta, &b, &tb), ta * da + tb * db);

  double x[5] = {1, 4, -2, 3.5, 0}, dx[5] = {0};
  __enzyme_autodiff((void *)max_sq, enzyme_dup, x, dx, enzyme_const, 5);
  for (int i = 0; i < 5; i++) checki("max_sq", i, dx[i], i == 1 ? 8.0 : 0.0);
  double v[5], vg = 0;
  for (int i = 0; i < 5; i++) v[i] = rnd(i + 2), vg += v[i] * dx[i];
  check("dot_max_sq", __enzyme_fwddiff((void *)max_sq, enzyme_dup, x, v, enzyme_const, 5), vg);
  return report();
}
