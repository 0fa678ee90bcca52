/* Driver of fortran_reductions.f90, fortran_assign.f90, fortran_derived.f90,
   fortran_transform.f90, fortran_intrinsics.f90 and fortran_module.f90: reverse mode against central finite
   differences, forward mode against reverse (<J v> = v . grad). Prints `CHECK name got want`. */
#include <math.h>
#include <stdio.h>
extern int enzyme_const, enzyme_dup;
void __enzyme_autodiff(void *, ...);
void __enzyme_fwddiff(void *, ...);
void reductions(int n, const double *x, double *e);
void assign_kernel(int n, const double *x, double *e);
void derived_kernel(int n, const double *x, double *e);
void transform_kernel(int n, const double *x, double *e);
void copies_kernel(int n, const double *x, double *e);
void intrinsics_kernel(int n, const double *x, double *e);
void module_kernel(int n, const double *x, double *e);
#define N 6
static int failed;
static void check(const char *name, int i, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1 + fabs(want));
  printf("CHECK %s[%d] %.12g %.12g%s\n", name, i, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
/* (a macro: the marker's function must be known at compile time) */
#define TEST(name, f)                                                                        \
  do {                                                                                       \
    double x[N], dx[N] = {0}, v[N], e, de = 1.0, te = 0, dot = 0;                            \
    for (int i = 0; i < N; i++) { x[i] = 0.4 + 0.3 * sin(1.7 * i); v[i] = cos(2.3 * i); }  \
    __enzyme_autodiff((void *)f, enzyme_const, N, enzyme_dup, x, dx, enzyme_dup, &e, &de);  \
    __enzyme_fwddiff((void *)f, enzyme_const, N, enzyme_dup, x, v, enzyme_dup, &e, &te);    \
    for (int i = 0; i < N; i++) {                                                            \
      double h = 1e-5, s = x[i], ep, em;                                                     \
      x[i] = s + h; f(N, x, &ep);                                                            \
      x[i] = s - h; f(N, x, &em);                                                            \
      x[i] = s;                                                                              \
      /* (REAL(4) terms are scaled down, and their rounding still shows at 1e-6) */          \
      check(name, i, dx[i], (ep - em) / (2 * h), 1e-5);                                     \
      dot += v[i] * dx[i];                                                                   \
    }                                                                                        \
    check("tangent", 0, te, dot, 1e-10);                                                     \
  } while (0)
int main(void) {
  TEST("reductions", reductions);
  TEST("assign", assign_kernel);
  TEST("derived", derived_kernel);
  TEST("transform", transform_kernel);
  TEST("copies", copies_kernel);
  TEST("intrinsics", intrinsics_kernel);
  TEST("module", module_kernel);
  return failed != 0;
}
