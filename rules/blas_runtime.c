/* enzyme-cc's column-major kernels for the derivatives of level-3 BLAS routines that the program
 * defines itself (a Reference BLAS built into a static library with embedded bitcode, as
 * Reference-LAPACK's libblas.a): rules/blas.py calls these instead of an external CBLAS, which
 * such a program need not link. Matrices are column-major (Fortran); a flag `t` says an operand
 * is used transposed; `lower` selects the triangle; `unit` that the diagonal is not stored (a
 * unit diagonal in a solve, no diagonal at all in an update). Written for enzyme-cc. */
#include <stdlib.h>
#include <string.h>

#define AT(a, ld, i, j) ((a)[(long)(i) + (long)(j) * (long)(ld)])

/* x . y in four partial sums (independent chains the compiler can also vectorize) */
static double dot(int k, const double *x, const double *y) {
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int l = 0;
    for (; l + 4 <= k; l += 4) {
        s0 += x[l] * y[l];
        s1 += x[l + 1] * y[l + 1];
        s2 += x[l + 2] * y[l + 2];
        s3 += x[l + 3] * y[l + 3];
    }
    for (; l < k; l++) s0 += x[l] * y[l];
    return (s0 + s1) + (s2 + s3);
}

/* C := alpha op(A) op(B) + beta C; C is m x n, op(A) m x k, op(B) k x n. beta = 0 sets C
 * without reading it (as BLAS). */
void __enzyme_cc_blas_gemm(int ta, int tb, int m, int n, int k, double alpha, const double *a,
                           int lda, const double *b, int ldb, double beta, double *c, int ldc) {
    for (int j = 0; j < n; j++) {
        double *cj = c + (long)j * ldc;
        if (beta == 0.0)
            memset(cj, 0, sizeof(double) * (m > 0 ? m : 0));
        else if (beta != 1.0)
            for (int i = 0; i < m; i++) cj[i] *= beta;
        if (alpha == 0.0) continue;
        if (!ta) {                       /* column j of C += A(:, l) * op(B)(l, j) */
            for (int l = 0; l < k; l++) {
                double s = alpha * (tb ? AT(b, ldb, j, l) : AT(b, ldb, l, j));
                const double *al = a + (long)l * lda;
                for (int i = 0; i < m; i++) cj[i] += s * al[i];
            }
        } else {                         /* C(i, j) += A(:, i) . op(B)(:, j) */
            for (int i = 0; i < m; i++) {
                const double *ai = a + (long)i * lda;
                double s;
                if (!tb)
                    s = dot(k, ai, b + (long)j * ldb);
                else {
                    s = 0.0;
                    for (int l = 0; l < k; l++) s += ai[l] * AT(b, ldb, j, l);
                }
                cj[i] += alpha * s;
            }
        }
    }
}

/* C := beta C (m x n); beta = 0 sets it to zero. */
void __enzyme_cc_blas_scale(int m, int n, double beta, double *c, int ldc) {
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            AT(c, ldc, i, j) = beta == 0.0 ? 0.0 : beta * AT(c, ldc, i, j);
}

/* The triangle of the n x n matrix C (diagonal included) := beta times itself. */
void __enzyme_cc_blas_scale_tri(int lower, int n, double beta, double *c, int ldc) {
    for (int j = 0; j < n; j++) {
        int lo = lower ? j : 0, hi = lower ? n : j + 1;
        for (int i = lo; i < hi; i++)
            AT(c, ldc, i, j) = beta == 0.0 ? 0.0 : beta * AT(c, ldc, i, j);
    }
}

/* A contiguous copy (leading dimension m) of the m x n matrix A, for the reverse sweep. */
double *__enzyme_cc_blas_save(int m, int n, const double *a, int lda) {
    size_t rows = m > 0 ? (size_t)m : 0, cols = n > 0 ? (size_t)n : 0;
    double *out = malloc(sizeof(double) * (rows * cols ? rows * cols : 1));
    if (!out) abort();
    for (size_t j = 0; j < cols; j++)
        memcpy(out + j * rows, a + (long)j * lda, sizeof(double) * rows);
    return out;
}

/* Element (i, j) of op(A), op(A) = A or A^T. */
static inline double op_at(const double *a, int lda, int t, int i, int j) {
    return t ? AT(a, lda, j, i) : AT(a, lda, i, j);
}

/* B := alpha op(A)^-1 B (left) or alpha B op(A)^-1 (right), A triangular (lower or upper as
 * stored), B m x n: BLAS's dtrsm. */
void __enzyme_cc_blas_trsm(int left, int lower, int t, int unit, int m, int n, double alpha,
                           const double *a, int lda, double *b, int ldb) {
    int tlow = lower != t;               /* op(A) is lower triangular */
    if (alpha != 1.0) __enzyme_cc_blas_scale(m, n, alpha, b, ldb);
    if (left) {                          /* op(A) X = B, column by column of B */
        for (int j = 0; j < n; j++) {
            double *x = b + (long)j * ldb;
            if (!t) {                    /* op(A) = A: eliminate with A's columns */
                for (int s = 0; s < m; s++) {
                    int kk = tlow ? s : m - 1 - s;
                    if (!unit) x[kk] /= AT(a, lda, kk, kk);
                    double v = x[kk];
                    if (v == 0.0) continue;
                    const double *ak = a + (long)kk * lda;
                    if (tlow) for (int i = kk + 1; i < m; i++) x[i] -= v * ak[i];
                    else for (int i = 0; i < kk; i++) x[i] -= v * ak[i];
                }
            } else {                     /* op(A) = A^T: row i of op(A) is column i of A */
                for (int s = 0; s < m; s++) {
                    int i = tlow ? s : m - 1 - s;
                    const double *ai = a + (long)i * lda;
                    double v = x[i];
                    if (tlow) for (int l = 0; l < i; l++) v -= ai[l] * x[l];
                    else for (int l = i + 1; l < m; l++) v -= ai[l] * x[l];
                    x[i] = unit ? v : v / ai[i];
                }
            }
        }
    } else {                             /* X op(A) = B: column j of X from the columns before it */
        for (int s = 0; s < n; s++) {
            int j = tlow ? n - 1 - s : s;
            double *xj = b + (long)j * ldb;
            int lo = tlow ? j + 1 : 0, hi = tlow ? n : j;
            for (int l = lo; l < hi; l++) {
                double tlj = op_at(a, lda, t, l, j);
                if (tlj == 0.0) continue;
                const double *xl = b + (long)l * ldb;
                for (int i = 0; i < m; i++) xj[i] -= tlj * xl[i];
            }
            if (!unit) {
                double d = AT(a, lda, j, j);
                for (int i = 0; i < m; i++) xj[i] /= d;
            }
        }
    }
}

/* The triangle of the n x n matrix C (without its diagonal when `unit`) += alpha U V^T, where
 * U and V are n x k, each stored as given or transposed (tu, tv). */
void __enzyme_cc_blas_tri_update(int lower, int unit, int n, int k, double alpha, const double *u,
                                 int ldu, int tu, const double *v, int ldv, int tv, double *c,
                                 int ldc) {
    for (int l = 0; l < k; l++)
        for (int j = 0; j < n; j++) {
            double s = alpha * op_at(v, ldv, tv, j, l);
            if (s == 0.0) continue;
            double *cj = c + (long)j * ldc;
            int lo = lower ? j + (unit ? 1 : 0) : 0, hi = lower ? n : j + (unit ? 0 : 1);
            if (!tu) {
                const double *ul = u + (long)l * ldu;
                for (int i = lo; i < hi; i++) cj[i] += s * ul[i];
            } else {
                for (int i = lo; i < hi; i++) cj[i] += s * AT(u, ldu, l, i);
            }
        }
}

/* The adjoint of dsyrk (C := alpha op(A) op(A)^T + beta C on C's triangle, op(A) n x k):
 * op(dA) += alpha (G + G^T) op(A), G the triangle of dC (its diagonal counted from both sides). */
void __enzyme_cc_blas_syrk_adj(int lower, int t, int n, int k, double alpha, const double *dc,
                               int ldc, const double *a, int lda, double *da, int ldda) {
    if (!t) {                            /* op(A) = A (n x k), column l of dA at a time */
        for (int l = 0; l < k; l++) {
            const double *al = a + (long)l * lda;
            double *dal = da + (long)l * ldda;
            for (int j = 0; j < n; j++) {
                const double *gj = dc + (long)j * ldc;
                int lo = lower ? j : 0, hi = lower ? n : j + 1;
                double s = alpha * al[j];
                for (int i = lo; i < hi; i++) dal[i] += s * gj[i];     /* G(:, j) A(j, l) */
                dal[j] += alpha * dot(hi - lo, gj + lo, al + lo);     /* G(:, j)^T A(:, l) */
            }
        }
        return;
    }
    for (int j = 0; j < n; j++) {        /* op(A) = A^T, A k x n: columns i and j of A */
        int lo = lower ? j : 0, hi = lower ? n : j + 1;
        for (int i = lo; i < hi; i++) {
            double g = alpha * AT(dc, ldc, i, j);
            if (g == 0.0) continue;
            if (i == j) g *= 2.0;
            double *dai = da + (long)i * ldda, *daj = da + (long)j * ldda;
            const double *ai = a + (long)i * lda, *aj = a + (long)j * lda;
            for (int l = 0; l < k; l++) dai[l] += g * aj[l];
            if (i != j) for (int l = 0; l < k; l++) daj[l] += g * ai[l];
        }
    }
}

/* C += alpha op(T) B (left; op(T) m x m) or alpha B op(T) (right; n x n), B and C m x n, where
 * T is the triangle of a matrix (without its diagonal when `unit`). */
void __enzyme_cc_blas_trmm_acc(int left, int lower, int t, int unit, int m, int n, double alpha,
                               const double *tm, int ldt, const double *b, int ldb, double *c,
                               int ldc) {
    int dim = left ? m : n;
    for (int j = 0; j < n; j++) {
        double *cj = c + (long)j * ldc;
        if (left) {
            for (int l = 0; l < dim; l++) {          /* C(:, j) += op(T)(:, l) B(l, j) */
                double s = alpha * AT(b, ldb, l, j);
                if (s == 0.0) continue;
                for (int i = 0; i < m; i++) {
                    int stored = lower ? (t ? l >= i : i >= l) : (t ? l <= i : i <= l);
                    if (!stored || (unit && i == l)) continue;
                    cj[i] += s * op_at(tm, ldt, t, i, l);
                }
            }
        } else {
            for (int l = 0; l < dim; l++) {          /* C(:, j) += B(:, l) op(T)(l, j) */
                int stored = lower ? (t ? j >= l : l >= j) : (t ? j <= l : l <= j);
                if (!stored || (unit && l == j)) continue;
                double s = alpha * op_at(tm, ldt, t, l, j);
                if (s == 0.0) continue;
                const double *bl = b + (long)l * ldb;
                for (int i = 0; i < m; i++) cj[i] += s * bl[i];
            }
        }
    }
}
