// Kernels chosen at run time whose body is only a memcpy (an identity preconditioner): reached
// only through a function pointer, the copy's memory had no type (the kernel itself accesses
// none), so its derivative failed and it was silently left out of the indirect call's
// dispatcher: the gradient aborted at run time, or with the kernel passed as an argument the
// link stopped with "cannot deduce the type of the memory being copied". The call's own
// knowledge of its arguments (the caller reads the destination as doubles) now types the copy,
// as for a direct call.
// f = sum z_i^2 with z = P x: P = identity (copy) gives 2 x_i, P = 0.5 (scale) gives 0.5 x_i.
#include <math.h>
#include <stdio.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-12 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

typedef void (*precond)(const double *, double *, int);
static void copy_op(const double *r, double *z, int n) { memcpy(z, r, n * sizeof(double)); }
static void shift_op(const double *r, double *z, int n) { memmove(z, r, n * sizeof(double)); }
static void scale_op(const double *r, double *z, int n) {
  for (int i = 0; i < n; i++) z[i] = 0.5 * r[i];
}
precond table[3] = {copy_op, scale_op, shift_op};

double by_table(const double *x, int which) {
  double z[4];
  table[which](x, z, 4);
  double s = 0;
  for (int i = 0; i < 4; i++) s += z[i] * z[i];
  return s;
}

double by_argument(const double *x, precond p) {
  double z[4];
  p(x, z, 4);
  double s = 0;
  for (int i = 0; i < 4; i++) s += z[i] * z[i];
  return s;
}

int main(void) {
  double x[4] = {1, 2, 3, 4};
  const double factor[3] = {2, 0.5, 2};
  char name[32];
  for (int w = 0; w < 3; w++) {
    double dx[4] = {0};
    __enzyme_autodiff((void *)by_table, enzyme_dup, x, dx, enzyme_const, w);
    for (int i = 0; i < 4; i++) {
      snprintf(name, sizeof name, "table%d_%d", w, i);
      check(name, dx[i], factor[w] * x[i]);
    }
    double e[4] = {0, 0, 1, 0};
    snprintf(name, sizeof name, "table%d_fwd", w);
    check(name, __enzyme_fwddiff((void *)by_table, enzyme_dup, x, e, enzyme_const, w),
          factor[w] * x[2]);
  }
  double dx[4] = {0};
  __enzyme_autodiff((void *)by_argument, enzyme_dup, x, dx, enzyme_const, copy_op);
  for (int i = 0; i < 4; i++) {
    snprintf(name, sizeof name, "argument_%d", i);
    check(name, dx[i], 2 * x[i]);
  }
  return failed;
}
