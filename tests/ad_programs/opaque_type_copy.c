// A module holding an opaque struct type (declared, never defined: as every Open MPI program
// has through MPI_COMM_WORLD) while the differentiated code copies doubles into a heap block in
// a loop LLVM turns into a memcpy: typing the copy walked the module's struct types of its size
// and stopped with "internal error: unknown type size: opaque".
// s = sum_{i=1..5} u_i (u_{i-1} + u_{i+1} + 1), u = (0, x, 0): ds/dx_k = 2 (u_k + u_{k+2}) + 1.
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

struct handle;                                       /* opaque */
extern struct handle world __attribute__((weak));    /* (never defined: its address is null) */
void touch(struct handle *h) __attribute__((weak));

double f(const double *x) {
  double *u = malloc(7 * sizeof(double));
  for (int i = 0; i < 5; i++) u[i + 1] = x[i];
  u[0] = 0;
  u[6] = 0;
  double s = 0;
  for (int i = 1; i <= 5; i++) s += u[i] * (u[i - 1] + u[i + 1] + 1.0);
  free(u);
  return s;
}

int main(void) {
  double x[5] = {1, 2, 3, 4, 5}, dx[5] = {0}, v[5], vdx = 0;
  if (&world != NULL && touch != NULL) touch(&world);
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx);
  for (int k = 0; k < 5; k++) {
    char name[16];
    snprintf(name, sizeof name, "dx[%d]", k);
    check(name, dx[k], 2 * ((k > 0 ? x[k - 1] : 0) + (k < 4 ? x[k + 1] : 0)) + 1);
    v[k] = sin(0.5 + k);
    vdx += v[k] * dx[k];
  }
  check("dot", __enzyme_fwddiff((void *)f, enzyme_dup, x, v), vdx);
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
