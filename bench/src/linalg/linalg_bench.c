/* Timing driver for the dense linear algebra benchmark (bench/linalg.py): the log-determinant by
 * blocked Cholesky and w . A^-1 b by blocked LU with partial pivoting, through the Fortran
 * library of this folder (factor.f90 over blas3.f90), primal and gradient with respect to A
 * (and b). Prints one line per kernel: name, median primal seconds, median gradient seconds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
void bchol_(const int *, double *, const int *, const int *, int *);
void blu_(const int *, double *, const int *, int *, const int *, int *);
void blu_solve_(const int *, const int *, const double *, const int *, const int *, double *,
                const int *);

static double logdet(const double *a0, int n, int nb) {
    double *a = malloc(sizeof(double) * n * n);
    memcpy(a, a0, sizeof(double) * n * n);
    int info;
    bchol_(&n, a, &n, &nb, &info);
    double s = 0;
    for (int i = 0; i < n; i++) s += 2 * log(a[i * n + i]);
    free(a);
    return s;
}

static double lu_solve(const double *a0, const double *b0, const double *w, int n, int nb) {
    double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n);
    int *piv = malloc(sizeof(int) * n), one = 1, info;
    memcpy(a, a0, sizeof(double) * n * n);
    memcpy(b, b0, sizeof(double) * n);
    blu_(&n, a, &n, piv, &nb, &info);
    blu_solve_(&n, &one, a, &n, piv, b, &n);
    double s = 0;
    for (int i = 0; i < n; i++) s += w[i] * b[i];
    free(a); free(b); free(piv);
    return s;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int cmp(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median(double *v, int k) { qsort(v, k, sizeof *v, cmp); return v[k / 2]; }

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 200, nb = argc > 2 ? atoi(argv[2]) : 32;
    int reps = argc > 3 ? atoi(argv[3]) : 9;
    double *a = malloc(sizeof(double) * n * n), *da = malloc(sizeof(double) * n * n);
    double *b = malloc(sizeof(double) * n), *db = malloc(sizeof(double) * n);
    double *w = malloc(sizeof(double) * n), *tp = malloc(sizeof(double) * reps),
           *tg = malloc(sizeof(double) * reps), sink = 0;
    unsigned s = 12345;
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) {
            s = s * 1103515245u + 12345u;
            a[i * n + j] = a[j * n + i] = ((s >> 8) % 1000) / 1000.0 - 0.5 + (i == j ? n : 0);
        }
    for (int i = 0; i < n; i++) { b[i] = sin(i); w[i] = cos(i); }
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        sink += logdet(a, n, nb);
        double t1 = now();
        memset(da, 0, sizeof(double) * n * n);
        __enzyme_autodiff((void *)logdet, enzyme_dup, a, da, enzyme_const, n, enzyme_const, nb);
        tg[r] = now() - t1;
        tp[r] = t1 - t0;
    }
    /* d logdet / dA = A^-T on the lower triangle (twice off the diagonal, as the upper one is
       not read): checked by the trace of A^-1 A = n through column sums */
    double tr = 0;
    for (int i = 0; i < n; i++) tr += da[i * n + i] * a[i * n + i];
    printf("cholesky_logdet %.6g %.6g  (check %.3g)\n", median(tp, reps), median(tg, reps), tr);
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        sink += lu_solve(a, b, w, n, nb);
        double t1 = now();
        memset(da, 0, sizeof(double) * n * n);
        memset(db, 0, sizeof(double) * n);
        __enzyme_autodiff((void *)lu_solve, enzyme_dup, a, da, enzyme_dup, b, db, enzyme_const, w,
                          enzyme_const, n, enzyme_const, nb);
        tg[r] = now() - t1;
        tp[r] = t1 - t0;
    }
    printf("lu_solve %.6g %.6g  (check %.3g)\n", median(tp, reps), median(tg, reps),
           sink + db[0]);
    return 0;
}
