/* Gradient through fortran_loop_nest.f90 (a loop nest sharing one latch): reverse mode against
 * central differences, forward against reverse. Prints CHECK lines; exits 1 if one is off. */
#include <math.h>
#include <stdio.h>
#include <string.h>

extern int enzyme_dup;
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
void right_upper_mult_(const char *, const int *, const int *, const double *, const double *,
                       const int *, double *, const int *, long);
enum { LD = 9 };
static int failed;

static double f(const double *a, const double *b) {
    double wb[LD * LD];
    memcpy(wb, b, sizeof wb);
    int m = 7, n = 5, ld = LD;
    double alpha = 0.7;
    right_upper_mult_("N", &m, &n, &alpha, a, &ld, wb, &ld, 1);
    double s = 0;
    for (int i = 0; i < LD * LD; i++) s += sin(i) * wb[i];
    return s;
}

static void check(const char *name, double got, double want) {
    int ok = fabs(got - want) <= 1e-6 * (1 + fabs(want));
    printf("CHECK %s %.10g %.10g%s\n", name, got, want, ok ? "" : " FAILED");
    failed |= !ok;
}

int main(void) {
    double a[LD * LD], b[LD * LD], da[LD * LD] = {0}, db[LD * LD] = {0}, va[LD * LD],
           vb[LD * LD], dot = 0;
    for (int i = 0; i < LD * LD; i++) {
        a[i] = cos(i * 1.3);
        b[i] = sin(i * 0.7);
        va[i] = cos(i * 0.3);
        vb[i] = sin(i * 1.1);
    }
    __enzyme_autodiff((void *)f, enzyme_dup, a, da, enzyme_dup, b, db);
    for (int i = 0; i < LD * LD; i++) {
        for (int w = 0; w < 2; w++) {
            double *x = w ? b : a, h = 1e-6, keep = x[i];
            x[i] = keep + h;
            double up = f(a, b);
            x[i] = keep - h;
            double down = f(a, b);
            x[i] = keep;
            char name[32];
            snprintf(name, sizeof name, "d%c[%d]", w ? 'b' : 'a', i);
            check(name, w ? db[i] : da[i], (up - down) / (2 * h));
        }
        dot += va[i] * da[i] + vb[i] * db[i];
    }
    check("fwd", __enzyme_fwddiff((void *)f, enzyme_dup, a, va, enzyme_dup, b, vb), dot);
    return failed;
}
