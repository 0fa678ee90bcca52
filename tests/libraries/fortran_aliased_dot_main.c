/* Gradients through fortran_aliased_dot.f90's dot product called with aliased arguments (the
 * same vector, overlapping ones, the same strided row), its result stored back into the vector:
 * reverse mode against central differences, forward against reverse. Prints CHECK lines; exits
 * 1 if one is off. */
#include <math.h>
#include <stdio.h>
#include <string.h>

extern int enzyme_dup;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
double dot5_(const int *, const double *, const int *, const double *, const int *);
enum { N = 9 };
static int which, failed;

static double f(const double *a0) {
    double a[N * N];
    memcpy(a, a0, sizeof a);
    int n = N, m = N - 1, one = 1, ld = N;
    if (which == 0)
        a[0] = dot5_(&n, a, &one, a, &one);
    else if (which == 1)
        a[3] = dot5_(&m, a + 1, &one, a, &one) + dot5_(&n, a + 4, &one, a + 4, &one);
    else
        a[N] = dot5_(&n, a + 2, &ld, a + 2, &ld);
    double s = 0;
    for (int i = 0; i < N * N; i++) s += sin(i + 1.0) * a[i];
    return s;
}

static void check(const char *name, double got, double want) {
    int ok = fabs(got - want) <= 1e-6 * (1 + fabs(want));
    printf("CHECK %s %.10g %.10g%s\n", name, got, want, ok ? "" : " FAILED");
    failed |= !ok;
}

int main(void) {
    double a[N * N], da[N * N], v[N * N];
    for (int i = 0; i < N * N; i++) {
        a[i] = cos(i * 0.7);
        v[i] = sin(i * 1.3);
    }
    for (which = 0; which < 3; which++) {
        memset(da, 0, sizeof da);
        __enzyme_autodiff((void *)f, enzyme_dup, a, da);
        double dot = 0;
        for (int i = 0; i < N * N; i++) {
            double h = 1e-6, keep = a[i];
            a[i] = keep + h;
            double up = f(a);
            a[i] = keep - h;
            double down = f(a);
            a[i] = keep;
            char name[32];
            snprintf(name, sizeof name, "case%d.da[%d]", which, i);
            check(name, da[i], (up - down) / (2 * h));
            dot += v[i] * da[i];
        }
        char name[32];
        snprintf(name, sizeof name, "case%d.fwd", which);
        check(name, __enzyme_fwddiff((void *)f, enzyme_dup, a, v), dot);
    }
    return failed;
}
