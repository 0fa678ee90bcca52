/* A file-scope work pointer that the differentiated function allocates, writes active values
 * through and frees without resetting it (`static double *work;`, a common pattern in C
 * science codes), differentiated three times (reverse, reverse, forward): the second call
 * freed the shadow block again ("double free", found by a new-user check). Prints
 * `got | expected` lines. */
#include <stdio.h>
#include <stdlib.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

static double *g_work;

double f(const double *x, int n) {
  g_work = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) g_work[i] = x[i] * x[i];
  double s = 0;
  for (int i = 0; i < n; i++) s += g_work[i] * (1 + i);
  free(g_work);
  return s;
}

int main(void) {
  double x[3] = {1, 2, 3};
  for (int k = 0; k < 2; k++) {
    double dx[3] = {0, 0, 0};
    __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, 3);
    printf("call %d: %g %g %g | %g %g %g\n", k, dx[0], dx[1], dx[2], 2 * x[0], 4 * x[1],
           6 * x[2]);
  }
  double v[3] = {1, 0, 0};
  printf("fwd %g | %g\n", __enzyme_fwddiff((void *)f, enzyme_dup, x, v, enzyme_const, 3),
         2 * x[0]);
  return 0;
}
