/* A copy whose memory is typed only by the routines it is handed to: a driver copies its input
   into a fresh block (memcpy, no TBAA on the copy) and passes the block to routines that read
   it as doubles, as a C program does before calling LAPACK, which overwrites its arguments.
   The derivative is taken in a function where nothing says what the input holds. Before, the
   copy was refused ("cannot deduce the type of the memory being copied"); its kind now comes
   from the callees' typed accesses through the parameter (typeinfo.param_kinds), two calls
   deep here, or from the memory it is copied on to (copy_types._linked_kinds). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-8 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

__attribute__((noinline)) static void scale_rows(double *a, int n) {
  for (int i = 0; i < n; i++) a[i] *= 1.0 + 0.5 * i;
}
__attribute__((noinline)) static double energy(double *a, int n) {
  scale_rows(a, n);                     /* the block typed one call further down */
  double s = 0;
  for (int i = 0; i < n; i++) s += sin(a[i]) * a[i];
  return s;
}
double f(const double *x, int n) {
  double *a = malloc(n * sizeof(double));
  memcpy(a, x, n * sizeof(double));
  double s = energy(a, n);
  free(a);
  return s;
}
/* copied into a block nothing reads, and again into one that is typed (Eigen's
   `MatrixXd A = map; PartialPivLU<MatrixXd> lu(map)`: A's copy stays, unread) */
double g(const double *x, int n) {
  double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double));
  memcpy(a, x, n * sizeof(double));
  memcpy(b, x, n * sizeof(double));
  double s = 0;
  for (int i = 0; i < n; i++) s += (i + 1) * b[i] * b[i];
  free(a);
  free(b);
  return s;
}
__attribute__((noinline)) static void gradient(double *x, double *dx, int n) {
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, n);
}
__attribute__((noinline)) static void gradient_g(double *x, double *dx, int n) {
  __enzyme_autodiff((void *)g, enzyme_dup, x, dx, enzyme_const, n);
}
__attribute__((noinline)) static double tangent(double *x, double *v, int n) {
  return __enzyme_fwddiff((void *)f, enzyme_dup, x, v, enzyme_const, n);
}

int main(void) {
  enum { N = 5 };
  double x[N], dx[N] = {0}, v[N], vg = 0;
  for (int i = 0; i < N; i++) { x[i] = 0.3 + 0.4 * i; v[i] = sin(2.1 + 3.3 * i); }
  gradient(x, dx, N);
  for (int i = 0; i < N; i++) {
    double c = 1.0 + 0.5 * i, a = c * x[i];        /* d/dx of sin(c x) c x */
    char name[16];
    snprintf(name, sizeof name, "dx[%d]", i);
    check(name, dx[i], c * (cos(a) * a + sin(a)));
    vg += v[i] * dx[i];
  }
  check("dot_forward_reverse", tangent(x, v, N), vg);
  double dg[N] = {0};
  gradient_g(x, dg, N);
  for (int i = 0; i < N; i++) {
    char name[16];
    snprintf(name, sizeof name, "dg[%d]", i);
    check(name, dg[i], 2.0 * (i + 1) * x[i]);
  }
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
