/* Level-3 BLAS routines the program defines itself (bench/src/linalg/blas3.f90) called with an
 * active alpha or beta: the BLAS rule takes those as constants, so such a call is
 * differentiated as the program's code (it was refused: "active 'alpha' in cblas_dgemm").
 * f(p) = sum of C after C := alpha op(A) op(B) + beta C, C := alpha A A^T + beta C (dsyrk) and
 * B := alpha inv(L) B (dtrsm), with alpha, beta and the matrices all functions of p. Reverse
 * mode against central differences, forward mode against reverse. Prints CHECK lines. */
#include <math.h>
#include <stdio.h>

extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);

void dgemm_(const char *, const char *, const int *, const int *, const int *, const double *,
            const double *, const int *, const double *, const int *, const double *, double *,
            const int *, long, long);
void dsyrk_(const char *, const char *, const int *, const int *, const double *, const double *,
            const int *, const double *, double *, const int *, long, long);
void dtrsm_(const char *, const char *, const char *, const char *, const int *, const int *,
            const double *, const double *, const int *, double *, const int *, long, long, long,
            long);

#define N 3
static int failed;

static void check(const char *name, double got, double want, double tol) {
    int ok = fabs(got - want) <= tol * (1 + fabs(want));
    printf("CHECK %s %.10g %.10g%s\n", name, got, want, ok ? "" : " FAILED");
    if (!ok) failed = 1;
}

double f(const double *p) {
    int n = N;
    double a[N * N], b[N * N], c[N * N], l[N * N];
    for (int i = 0; i < N * N; i++) {
        a[i] = sin(p[i % 4] + 0.3 * i);
        b[i] = cos(0.7 * i) * p[(i + 1) % 4];
        c[i] = 0.1 * i * p[2];
        l[i] = (i % (N + 1) == 0) ? 2.0 + p[3] * p[3] : 0.2 * p[i % 4];
    }
    double alpha = p[0] * p[1], beta = exp(0.5 * p[2]);
    dgemm_("N", "T", &n, &n, &n, &alpha, a, &n, b, &n, &beta, c, &n, 1, 1);
    double alpha2 = 0.5 + p[3], beta2 = p[0];
    dsyrk_("L", "N", &n, &n, &alpha2, a, &n, &beta2, c, &n, 1, 1);
    double alpha3 = 1.0 / (1.0 + p[1] * p[1]);
    dtrsm_("L", "L", "N", "N", &n, &n, &alpha3, l, &n, c, &n, 1, 1, 1, 1);
    double s = 0;
    for (int i = 0; i < N * N; i++) s += c[i] * (1.0 + 0.1 * i);
    return s;
}

int main(void) {
    double p[4] = {0.7, -0.4, 0.9, 0.3}, g[4] = {0}, v[4] = {0.3, -0.8, 0.5, 0.2}, vg = 0;
    __enzyme_autodiff((void *)f, enzyme_dup, p, g);
    for (int i = 0; i < 4; i++) {
        double h = 1e-6, q = p[i], up, dn;
        p[i] = q + h; up = f(p);
        p[i] = q - h; dn = f(p);
        p[i] = q;
        char name[16];
        snprintf(name, sizeof name, "g[%d]", i);
        check(name, g[i], (up - dn) / (2 * h), 1e-6);
        vg += v[i] * g[i];
    }
    check("fwd", __enzyme_fwddiff((void *)f, enzyme_dup, p, v), vg, 1e-9);
    return failed;
}
