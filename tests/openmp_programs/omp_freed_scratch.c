/* A scratch block the differentiated function allocates, fills in one parallel region, reads in a
   second and frees at the end: the region captures the pointer variable by reference, so at -O2
   the pointer lives in a local whose lifetime markers once counted as writes of unknown pointers
   into it, and the free of the pointer loaded from it stopped the read-only analysis for the
   whole gradient (ad/plan/read_only.py): every load of the constant inputs x and idx was taped.
   They are re-read now (tests/test_tape.py checks the tape's size); the gradient is checked
   against central differences at 1, 2 and 4 threads. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
#define N 64
static int failed;
static void check(const char *name, int i, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1.0 + fabs(want));
  printf("CHECK %s[%d] %.15g %.15g%s\n", name, i, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}

double energy(const double *x, const int *idx, int n) {
  double *tmp = malloc(n * sizeof(double));
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++) tmp[i] = x[idx[i]] * x[i] + 0.1;
  double s = 0;
#pragma omp parallel for reduction(+ : s) schedule(static)
  for (int i = 0; i < n; i++) s += sin(tmp[i]) * x[idx[(i + 1) % n]] + tmp[i] * tmp[i];
  free(tmp);
  return s;
}

int main(void) {
  double x[N], dx[N] = {0};
  int idx[N];
  for (int i = 0; i < N; i++) {
    x[i] = 0.3 + 0.01 * i * (i % 5);
    idx[i] = (7 * i + 3) % N;
  }
  __enzyme_autodiff((void *)energy, enzyme_dup, x, dx, enzyme_const, idx, enzyme_const, N);
  for (int i = 0; i < N; i += 7) {
    double h = 1e-6, keep = x[i];
    x[i] = keep + h;
    double up = energy(x, idx, N);
    x[i] = keep - h;
    double down = energy(x, idx, N);
    x[i] = keep;
    check("dx", i, dx[i], (up - down) / (2 * h), 1e-6);
  }
  double sum = 0;
  for (int i = 0; i < N; i++) sum += dx[i];
  printf("SUM %.17g\n", sum);       /* (compared across thread counts by the test) */
  return failed != 0;
}
