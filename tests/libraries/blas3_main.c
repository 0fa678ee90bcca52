/* Gradients through level-3 BLAS routines that the program defines itself (Fortran, Reference
 * BLAS interface: bench/src/linalg/blas3.f90) and through blocked Cholesky and LU built on them
 * (bench/src/linalg/factor.f90). enzyme-cc replaces such a routine's code by its derivative rule
 * (rules/blas.py); each check compares reverse mode with central finite differences and forward
 * mode with reverse mode (<J v, w> = <v, J^T w>), for every combination of the routines' flags.
 * Prints CHECK name got expected (exits 1 if one is off) and GRAD name value, a summary of each
 * gradient, which must not depend on whether the routines are differentiated by the rule or as
 * code (ENZYME_CC_DEFINED_BLAS=code). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
void bchol_(const int *, double *, const int *, const int *, int *);
void bchol_solve_(const int *, const int *, const double *, const int *, double *, const int *);
void blu_(const int *, double *, const int *, int *, const int *, int *);
void blu_solve_(const int *, const int *, const double *, const int *, const int *, double *,
                const int *);

static int failed;
static const char *FLAGS = "NT";

static void check(const char *name, double got, double want, double tol) {
    int ok = fabs(got - want) <= tol * (1 + fabs(want));
    printf("CHECK %s %.10g %.10g%s\n", name, got, want, ok ? "" : " FAILED");
    if (!ok) failed = 1;
}

/* the case being checked (set before each differentiation: constants to the derivative) */
static int op, f1, f2, f3, f4;        /* op 0: gemm 1: syrk 2: trsm; flags */
enum { M = 7, N = 5, K = 4, LD = 9 };  /* leading dimensions larger than the matrices */

/* loss = sum w .* (the written matrix) after the routine, with the matrix arguments copied into
 * work memory that is overwritten after the call (so the rule must have saved what it reads) */
__attribute__((noinline)) static double kernel_loss(const double *a, const double *b,
                                                    const double *w) {
    double *wa = malloc(sizeof(double) * LD * LD), *wb = malloc(sizeof(double) * LD * LD);
    memcpy(wa, a, sizeof(double) * LD * LD);
    memcpy(wb, b, sizeof(double) * LD * LD);
    int m = M, n = N, k = K, ld = LD;
    double alpha = 0.7, beta = 1.3;
    char c1 = FLAGS[f1], c2 = FLAGS[f2];
    if (op == 0) {
        double *c = malloc(sizeof(double) * LD * LD);
        for (int i = 0; i < LD * LD; i++) c[i] = 0.1 * w[i];
        for (int i = 0; i < LD * LD; i++) c[i] += 0.5 * b[(i * 7) % (LD * LD)];
        dgemm_(&c1, &c2, &m, &n, &k, &alpha, wa, &ld, wb, &ld, &beta, c, &ld, 1, 1);
        memcpy(wb, c, sizeof(double) * LD * LD);
        free(c);
    } else if (op == 1) {
        char u = f1 ? 'U' : 'L';
        dsyrk_(&u, &c2, &n, &k, &alpha, wa, &ld, &beta, wb, &ld, 1, 1);
    } else {
        char side = f1 ? 'R' : 'L', u = f2 ? 'U' : 'L', t = FLAGS[f3], d = f4 ? 'U' : 'N';
        int rows = M, cols = N;
        for (int i = 0; i < LD; i++) wa[i * LD + i] += 4.0;     /* well conditioned */
        dtrsm_(&side, &u, &t, &d, &rows, &cols, &alpha, wa, &ld, wb, &ld, 1, 1, 1, 1);
    }
    for (int i = 0; i < LD * LD; i++) wa[i] = -1.0;             /* A is gone */
    double s = 0;
    for (int i = 0; i < LD * LD; i++) s += w[i] * wb[i] + 0.01 * wa[i];
    free(wa);
    free(wb);
    return s;
}

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

/* w . A^-1 b, by Cholesky (chol = 1) or by LU with partial pivoting */
static double solve_loss(const double *a0, const double *b0, const double *w, int n, int nb,
                         int chol) {
    double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n);
    int *piv = malloc(sizeof(int) * n), one = 1, info;
    memcpy(a, a0, sizeof(double) * n * n);
    memcpy(b, b0, sizeof(double) * n);
    if (chol) {
        bchol_(&n, a, &n, &nb, &info);
        bchol_solve_(&n, &one, a, &n, b, &n);
    } else {
        blu_(&n, a, &n, piv, &nb, &info);
        blu_solve_(&n, &one, a, &n, piv, b, &n);
    }
    double s = 0;
    for (int i = 0; i < n; i++) s += w[i] * b[i];
    free(a);
    free(b);
    free(piv);
    return s;
}

static double rnd(unsigned *s) { *s = *s * 1103515245u + 12345u; return ((*s >> 8) % 2000) / 1000.0 - 1; }

static void check_kernel(const char *name) {
    double a[LD * LD], b[LD * LD], w[LD * LD], da[LD * LD] = {0}, db[LD * LD] = {0};
    unsigned seed = 7 + op * 100 + f1 * 8 + f2 * 4 + f3 * 2 + f4;
    for (int i = 0; i < LD * LD; i++) { a[i] = rnd(&seed); b[i] = rnd(&seed); w[i] = rnd(&seed); }
    __enzyme_autodiff((void *)kernel_loss, enzyme_dup, a, da, enzyme_dup, b, db, enzyme_const, w);
    double va[LD * LD], vb[LD * LD], dot = 0, maxfd = 0, maxerr = 0;
    for (int i = 0; i < LD * LD; i++) {
        va[i] = rnd(&seed);
        vb[i] = rnd(&seed);
        dot += va[i] * da[i] + vb[i] * db[i];
    }
    double tan = __enzyme_fwddiff((void *)kernel_loss, enzyme_dup, a, va, enzyme_dup, b, vb,
                                  enzyme_const, w);
    for (int i = 0; i < LD * LD; i += 5) {     /* central differences, every fifth entry */
        for (int which = 0; which < 2; which++) {
            double *x = which ? b : a, h = 1e-6, keep = x[i];
            x[i] = keep + h;
            double up = kernel_loss(a, b, w);
            x[i] = keep - h;
            double down = kernel_loss(a, b, w);
            x[i] = keep;
            double fd = (up - down) / (2 * h), g = which ? db[i] : da[i];
            if (fabs(fd) > maxfd) maxfd = fabs(fd);
            if (fabs(fd - g) > maxerr) maxerr = fabs(fd - g);
        }
    }
    char label[64];
    printf("GRAD %s %.15g\n", name, dot);       /* <v, gradient>: compared across builds */
    snprintf(label, sizeof label, "%s.fd_err", name);
    check(label, maxerr / (1 + maxfd), 0, 1e-6);
    snprintf(label, sizeof label, "%s.fwd", name);
    check(label, tan, dot, 1e-9);
}

static void check_solver(const char *name, int n, int nb, int which) {
    double *a = malloc(sizeof(double) * n * n), *da = calloc(n * n, sizeof(double));
    double *b = malloc(sizeof(double) * n), *db = calloc(n, sizeof(double)), *w = malloc(sizeof(double) * n);
    unsigned seed = 99 + which;
    for (int i = 0; i < n * n; i++) a[i] = 0.3 * rnd(&seed);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)      /* symmetric positive definite (and not diagonal-first) */
            a[i * n + j] = a[j * n + i] = (i == j ? n * 0.5 : 0) + 0.3 * rnd(&seed);
    for (int i = 0; i < n; i++) { b[i] = rnd(&seed); w[i] = rnd(&seed); }
    double maxfd = 0, maxerr = 0;
    if (which == 0) {
        __enzyme_autodiff((void *)logdet, enzyme_dup, a, da, enzyme_const, n, enzyme_const, nb);
    } else {
        if (which == 2)                 /* LU: not symmetric, pivots needed */
            for (int i = 0; i < n; i++) a[i * n + (i + 1) % n] += 2.0 * n;
        __enzyme_autodiff((void *)solve_loss, enzyme_dup, a, da, enzyme_dup, b, db, enzyme_const,
                          w, enzyme_const, n, enzyme_const, nb, enzyme_const, which == 1);
    }
    for (int i = 0; i < n * n; i += 3) {
        double h = 1e-6, keep = a[i], up, down;
        if (which == 1 && i % n > i / n) continue;   /* Cholesky reads the lower triangle */
        a[i] = keep + h;
        up = which ? solve_loss(a, b, w, n, nb, which == 1) : logdet(a, n, nb);
        a[i] = keep - h;
        down = which ? solve_loss(a, b, w, n, nb, which == 1) : logdet(a, n, nb);
        a[i] = keep;
        double fd = (up - down) / (2 * h);
        if (which == 0 && i % n < i / n) fd = 0;     /* upper triangle: not read */
        if (fabs(fd) > maxfd) maxfd = fabs(fd);
        if (fabs(fd - da[i]) > maxerr) maxerr = fabs(fd - da[i]);
    }
    check(name, maxerr / (1 + maxfd), 0, 1e-6);
    double sum = 0;
    for (int i = 0; i < n * n; i++) sum += da[i] * cos(i);
    for (int i = 0; i < n; i++) sum += db[i] * sin(i);
    printf("GRAD %s %.15g\n", name, sum);
    free(a); free(da); free(b); free(db); free(w);
}

int main(void) {
    char name[32];
    for (op = 0; op < 3; op++)
        for (f1 = 0; f1 < 2; f1++)
            for (f2 = 0; f2 < 2; f2++)
                for (f3 = 0; f3 < (op == 2 ? 2 : 1); f3++)
                    for (f4 = 0; f4 < (op == 2 ? 2 : 1); f4++) {
                        snprintf(name, sizeof name, "%s%d%d%d%d", op == 0 ? "gemm" : op == 1 ?
                                 "syrk" : "trsm", f1, f2, f3, f4);
                        check_kernel(name);
                    }
    check_solver("logdet_chol", 23, 5, 0);
    check_solver("solve_chol", 23, 5, 1);
    check_solver("solve_lu", 23, 5, 2);
    return failed;
}
