/* bsearch in differentiated code: the bracket of a piecewise-linear table found in the knots
   (a pointer into them, turned into an index), and a record found by its key whose double is
   then read through bsearch's result (its shadow comes from the array's). At -Os/-Oz glibc's
   <stdlib.h> gives no inline bsearch, so the call had no code to differentiate and was refused;
   enzyme-cc links a body of its own (rules/c_search.c). */
#include <stdio.h>
#include <stdlib.h>
double __enzyme_autodiff(void *, ...);
int enzyme_dup, enzyme_const;

static const double xs[5] = {0.0, 0.5, 1.2, 2.0, 3.0};

static int bracket(const void *k, const void *e) {
  double x = *(const double *)k;
  const double *a = e;
  return x < a[0] ? -1 : (x >= a[1] ? 1 : 0);
}

/* ys active: the value of the interpolant at x */
__attribute__((noinline)) double interp(const double *ys, double x) {
  const double *a = bsearch(&x, xs, 4, sizeof(double), bracket);
  int i = a ? (int)(a - xs) : 0;
  double u = (x - xs[i]) / (xs[i + 1] - xs[i]);
  return ys[i] + u * (ys[i + 1] - ys[i]);
}

typedef struct { long id; double value; } Entry;

static int by_id(const void *k, const void *e) {
  long id = *(const long *)k, other = ((const Entry *)e)->id;
  return (id > other) - (id < other);
}

/* the sum of the squares of the values of the entries with the given ids */
__attribute__((noinline)) double lookup(const Entry *table, int n, const long *ids, int m) {
  double s = 0;
  for (int j = 0; j < m; j++) {
    const Entry *e = bsearch(&ids[j], table, n, sizeof(Entry), by_id);
    if (e) s += e->value * e->value;
  }
  return s;
}

int main(void) {
  double ys[5] = {0.0, 1.0, 1.5, 1.0, 0.2}, dys[5] = {0};
  double dx = __enzyme_autodiff((void *)interp, enzyme_dup, ys, dys, 1.6);
  /* x = 1.6 in [1.2, 2.0): u = 0.5 */
  printf("interp dx %g | %g\n", dx, (1.0 - 1.5) / (2.0 - 1.2));
  printf("interp dys %g %g %g %g %g | 0 0 0.5 0.5 0\n", dys[0], dys[1], dys[2], dys[3], dys[4]);
  Entry table[5] = {{2, 0.5}, {3, -1.5}, {5, 2.0}, {8, 0.25}, {13, -3.0}}, dtable[5] = {{0}};
  long ids[4] = {8, 2, 7, 8};
  __enzyme_autodiff((void *)lookup, enzyme_dup, table, dtable, enzyme_const, 5, enzyme_const, ids,
                    enzyme_const, 4);
  /* id 8 twice (value 0.25), id 2 once (0.5), id 7 absent */
  printf("lookup %g %g %g %g %g | 1 0 0 1 0\n", dtable[0].value, dtable[1].value,
         dtable[2].value, dtable[3].value, dtable[4].value);
  return 0;
}
