// qsort of an int index array whose pointer travels in a record beside the active data (a
// kd-tree or ranking helper that is not inlined): the index pointer, read from memory that has
// a shadow, counted as carrying derivatives and the call was refused ("qsort moves the elements
// of the array"), though the error's own hint says to sort indices. A qsort whose comparator
// reads both elements whole as integers now runs as in the primal.
// s = sum_k (k + 1) x_(k)^2 over the values in ascending order: ds/dx_i = 2 (rank_i + 1) x_i.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-12 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

static const double *values;
static int by_value(const void *a, const void *b) {
  double va = values[*(const int *)a], vb = values[*(const int *)b];
  return (va > vb) - (va < vb);
}

typedef struct { int *idx; const double *x; int n; } ranking;

__attribute__((noinline)) static void rank_sort(ranking *r) {
  values = r->x;
  qsort(r->idx, r->n, sizeof(int), by_value);
}

double ranked_sum(const double *x, int n) {
  int idx[16];
  ranking r = {idx, x, n};
  for (int i = 0; i < n; i++) idx[i] = i;
  rank_sort(&r);
  double s = 0;
  for (int k = 0; k < n; k++) s += (k + 1) * x[idx[k]] * x[idx[k]];
  return s;
}

int main(void) {
  double x[5] = {0.3, -1.2, 2.5, 0.7, 1.1}, dx[5] = {0};
  const int rank[5] = {1, 0, 4, 2, 3};
  __enzyme_autodiff((void *)ranked_sum, enzyme_dup, x, dx, enzyme_const, 5);
  char name[32];
  for (int i = 0; i < 5; i++) {
    snprintf(name, sizeof name, "reverse_%d", i);
    check(name, dx[i], 2 * (rank[i] + 1) * x[i]);
    double e[5] = {0};
    e[i] = 1;
    snprintf(name, sizeof name, "forward_%d", i);
    check(name, __enzyme_fwddiff((void *)ranked_sum, enzyme_dup, x, e, enzyme_const, 5),
          2 * (rank[i] + 1) * x[i]);
  }
  return failed;
}
