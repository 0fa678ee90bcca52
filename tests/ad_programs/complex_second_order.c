/* Second derivatives of C99 complex code: forward over reverse and reverse over reverse of
   y = z e^z + sin(z) z. The reverse of the complex calls (cexp, csin, __muldc3) takes the
   adjoint of their result as a {double, double} argument, which depends on z: differentiating
   that reverse again must carry its tangent/adjoint (it was dropped as a constant: silently
   wrong Hessians). Checked against central differences of the first derivative, which is
   checked against the analytic y' = (1 + z) e^z + cos(z) z + sin(z). */
#include <complex.h>
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= 1e-6 * (1.0 + fabs(want));
  printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
void __enzyme_fwddiff(void *, ...);

static void f(const double _Complex *z, double _Complex *y) {
  *y = *z * cexp(*z) + csin(*z) * *z;
}

/* the gradient of Re(conj(c) y): g = conj(y') c */
__attribute__((noinline)) void grad(const double _Complex *z, double _Complex *g,
                                    const double _Complex *c) {
  double _Complex y = 0, dy = *c;
  *g = 0;
  __enzyme_autodiff((void *)f, enzyme_dup, z, g, enzyme_dup, &y, &dy);
}

/* Re(conj(u) g(z)), whose gradient is the Hessian applied to u */
__attribute__((noinline)) double proj(const double _Complex *z, const double _Complex *c,
                                      const double _Complex *u) {
  double _Complex g;
  grad(z, &g, c);
  return creal(conj(*u) * g);
}

int main(void) {
  const double h = 1e-6;
  for (int k = 0; k < 2; k++) {
    double _Complex z = (0.3 + 0.4 * k) + (0.7 - 0.9 * k) * I, c = 0.4 - 0.2 * I;
    double _Complex t = 0.5 + 0.9 * I, u = -0.6 + 0.25 * I, zz;
    char name[48];
    /* first order against the analytic derivative */
    double _Complex g, d1 = (1 + z) * cexp(z) + ccos(z) * z + csin(z);
    grad(&z, &g, &c);
    snprintf(name, sizeof name, "grad_re@%d", k);
    check(name, creal(g), creal(conj(d1) * c));
    snprintf(name, sizeof name, "grad_im@%d", k);
    check(name, cimag(g), cimag(conj(d1) * c));
    /* forward over reverse: the tangent of g along t */
    double _Complex gt, dg = 0, gp, gm;
    __enzyme_fwddiff((void *)grad, enzyme_dup, &z, &t, enzyme_dup, &gt, &dg, enzyme_const, &c);
    zz = z + h * t; grad(&zz, &gp, &c);
    zz = z - h * t; grad(&zz, &gm, &c);
    snprintf(name, sizeof name, "fwd_rev_re@%d", k);
    check(name, creal(dg), creal((gp - gm) / (2 * h)));
    snprintf(name, sizeof name, "fwd_rev_im@%d", k);
    check(name, cimag(dg), cimag((gp - gm) / (2 * h)));
    /* reverse over reverse: the gradient of proj */
    double _Complex dz = 0;
    __enzyme_autodiff((void *)proj, enzyme_dup, &z, &dz, enzyme_const, &c, enzyme_const, &u);
    zz = z + h; double pr = proj(&zz, &c, &u);
    zz = z - h; pr = (pr - proj(&zz, &c, &u)) / (2 * h);
    zz = z + h * I; double pi = proj(&zz, &c, &u);
    zz = z - h * I; pi = (pi - proj(&zz, &c, &u)) / (2 * h);
    snprintf(name, sizeof name, "rev_rev_re@%d", k);
    check(name, creal(dz), pr);
    snprintf(name, sizeof name, "rev_rev_im@%d", k);
    check(name, cimag(dz), pi);
  }
  if (failed) printf("FAILED: %d check(s)\n", failed);
  return failed != 0;
}
