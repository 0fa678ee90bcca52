/* Annotated loops nested in annotated loops (the inner one is outlined inside the outer step,
 * which passes on what it knows of the memory: the size hint), at every level of the gradient
 * and in the primal: values equal the plain loops' (gradient 1e-12, FD 1e-6). */
#include <enzyme/checkpoint.h>
void __enzyme_ptr_size_hint(void *, long);  /* declared by the program, as in Enzyme */
#include <math.h>
#include <stdio.h>
#include <string.h>
double __enzyme_autodiff(void *, ...);
extern int enzyme_dup, enzyme_const;
static int failed;
static void check(const char *name, double got, double want, double tol) {
  int ok = fabs(got - want) <= tol * (1 + fabs(want));
  printf("CHECK %s %.17g %.17g%s\n", name, got, want, ok ? "" : "  MISMATCH");
  failed += !ok;
}
#define BODY(OUTER, INNER)                                                                   \
  double acc = 0;                                                                            \
  OUTER for (long i = 0; i < n; i++) {                                                       \
    INNER for (int k = 0; k < 3; k++) u[k] = u[k] + 0.1 * sin(u[(k + 1) % 3]) + 0.01 * i;    \
    acc += u[0] * u[1];                                                                      \
  }                                                                                          \
  return acc + u[2];
__attribute__((noinline)) double plain(double *u, long n) { BODY(, ) }
__attribute__((noinline)) double nested(double *u, long n) {
  __enzyme_ptr_size_hint(u, 3 * sizeof(double));
  BODY(__attribute__((enzyme_checkpoint("revolve", 2))),
       __attribute__((enzyme_checkpoint("periodic", 2))))
}
int main(void) {
  char name[64];
  for (long n = 0; n < 12; n += 5) {
    double u0[3] = {0.1, 0.2, 0.3}, u[3], v[3], du[3] = {0}, dv[3] = {0};
    memcpy(u, u0, sizeof u);
    memcpy(v, u0, sizeof v);
    __enzyme_autodiff((void *)plain, enzyme_dup, u, du, enzyme_const, n);
    __enzyme_autodiff((void *)nested, enzyme_dup, v, dv, enzyme_const, n);
    for (int k = 0; k < 3; k++) {
      double up[3], um[3];
      memcpy(up, u0, sizeof up);
      memcpy(um, u0, sizeof um);
      up[k] += 1e-6;
      um[k] -= 1e-6;
      snprintf(name, sizeof name, "n%ld_du%d", n, k);
      check(name, dv[k], du[k], 1e-12);
      snprintf(name, sizeof name, "n%ld_fd%d", n, k);
      check(name, dv[k], (nested(up, n) - nested(um, n)) / 2e-6, 1e-6);
    }
    memcpy(u, u0, sizeof u);
    memcpy(v, u0, sizeof v);
    snprintf(name, sizeof name, "n%ld_primal", n);
    check(name, nested(v, n), plain(u, n), 1e-15);
  }
  return failed != 0;
}
