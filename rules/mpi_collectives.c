/* enzyme-cc's MPI runtime: collectives (see mpi_runtime.h). */
#include "mpi_runtime.h"

/* ---- collectives --------------------------------------------------------------------------- */
Aug __enzyme_cc_mpi_aug_barrier(H comm) { return (Aug){NULL, MPI_Barrier(comm)}; }
void __enzyme_cc_mpi_rev_barrier(void *rec, H comm) { (void)rec; MPI_Barrier(comm); }
int __enzyme_cc_mpi_fwd_barrier(H comm) { return MPI_Barrier(comm); }

Aug __enzyme_cc_mpi_aug_bcast(void *buf, int n, H dt, int root, H comm, void *dbuf, int k) {
    (void)dbuf, (void)k;
    return (Aug){NULL, MPI_Bcast(buf, n, dt, root, comm)};
}
/* every rank's adjoint sums up at the root */
void __enzyme_cc_mpi_rev_bcast(void *rec, void *buf, int n, H dt, int root, H comm, void *dbuf,
                               int k) {
    (void)rec, (void)buf;
    void *t = copy(dbuf, k, (size_t)n);
    if (rank_of(comm) == root) {
        MPI_Reduce(IN_PLACE, t, n, dt, SUM, root, comm);
        if (dbuf) memcpy(dbuf, t, (size_t)n * esz(k));
    } else {
        MPI_Reduce(t, NULL, n, dt, SUM, root, comm);
        zero(dbuf, k, (size_t)n);
    }
    free(t);
}
/* one lane's tangent of bcast */
static void tan_bcast(void *buf, int n, H dt, int root, H comm, void *dbuf, int k) {
    void *t = dbuf ? dbuf : copy(NULL, k, (size_t)n);
    MPI_Bcast(t, n, dt, root, comm);
    if (t != dbuf) free(t);
}
int __enzyme_cc_mpi_fwdv_bcast(void *buf, int n, H dt, int root, H comm, void **dbuf, int k,
                               int w) {
    int rc = MPI_Bcast(buf, n, dt, root, comm);
    for (int l = 0; l < w; l++) tan_bcast(buf, n, dt, root, comm, dbuf[l], k);
    return rc;
}
int __enzyme_cc_mpi_fwd_bcast(void *buf, int n, H dt, int root, H comm, void *dbuf, int k) {
    return __enzyme_cc_mpi_fwdv_bcast(buf, n, dt, root, comm, &dbuf, k, 1);
}

/* Reductions. max/min: the rank holding the extremum of element i (the lowest such rank; for
 * MAXLOC/MINLOC the one whose (value, index) pair is the result's) gets its adjoint / gives its
 * tangent. `mine` are this rank's inputs as they were before the call, `res` the result. */
static char *winners(const void *mine, const void *res, int k, int n, H comm) {
    int me = rank_of(comm), *cand = xcalloc((size_t)n, sizeof(int)), *win = xcalloc((size_t)n, sizeof(int));
    for (int i = 0; i < n; i++) {
        int same = get(mine, k, (size_t)i) == get(res, k, (size_t)i);
        if (same && (k == K_FLOAT_INT || k == K_DOUBLE_INT)) {
            size_t off = isdbl(k) ? 8 : 4;
            same = *(const int *)((const char *)mine + i * esz(k) + off) ==
                   *(const int *)((const char *)res + i * esz(k) + off);
        }
        cand[i] = same ? me : 0x7fffffff;
    }
    MPI_Allreduce(cand, win, n, INT, MIN, comm);
    char *mask = xcalloc((size_t)n, 1);
    for (int i = 0; i < n; i++) mask[i] = win[i] == me;
    free(cand), free(win);
    return mask;
}
/* values of n elements (the float part of pairs) as a plain array of the value type */
static void *vals(const void *b, int k, int n) {
    void *t = xcalloc((size_t)n, isdbl(k) ? 8 : 4);
    if (b)
        for (int i = 0; i < n; i++) put(t, isdbl(k) ? K_DOUBLE : K_FLOAT, (size_t)i, get(b, k, (size_t)i));
    return t;
}
typedef struct { char *mask; } RedRec;

static Aug reduce_aug(void *sb, void *rb, int n, H dt, H op, int root, H comm, int k, int code,
                      int all) {
    int me = rank_of(comm);
    int inplace = sb == IN_PLACE;
    void *mine = code == OP_SUM ? NULL : copy(inplace ? rb : sb, k, (size_t)n);
    int rc = all ? MPI_Allreduce(sb, rb, n, dt, op, comm) : MPI_Reduce(sb, rb, n, dt, op, root, comm);
    if (code == OP_SUM) return (Aug){NULL, rc};
    void *res = copy(all || me == root ? rb : NULL, k, (size_t)n);
    if (!all) MPI_Bcast(res, n, dt, root, comm);
    RedRec *r = xcalloc(1, sizeof *r);
    r->mask = winners(mine, res, k, n, comm);
    free(mine), free(res);
    return (Aug){r, rc};
}
Aug __enzyme_cc_mpi_aug_reduce(void *sb, void *rb, int n, H dt, H op, int root, H comm,
                               void *dsb, void *drb, int k, int code) {
    (void)dsb, (void)drb;
    return reduce_aug(sb, rb, n, dt, op, root, comm, k, code, 0);
}
Aug __enzyme_cc_mpi_aug_allreduce(void *sb, void *rb, int n, H dt, H op, H comm, void *dsb,
                                  void *drb, int k, int code) {
    (void)dsb, (void)drb;
    return reduce_aug(sb, rb, n, dt, op, 0, comm, k, code, 1);
}
/* reverse: the result's adjoint (summed over ranks for Allreduce, the root's for Reduce) goes to
 * every input (sum) or to the winner's (max/min); the result's adjoint is consumed */
static void reduce_rev(RedRec *rec, void *sb, int n, int root, H comm, void *dsb, void *drb,
                       int k, int all) {
    int me = rank_of(comm), inplace = sb == IN_PLACE, holds = all || me == root;
    void *t = vals(holds ? drb : NULL, k, n);
    if (holds) zero(drb, k, (size_t)n);
    H vt = valtype(k);
    if (all) MPI_Allreduce(IN_PLACE, t, n, vt, SUM, comm);
    else MPI_Bcast(t, n, vt, root, comm);
    int vk = isdbl(k) ? K_DOUBLE : K_FLOAT;
    void *dst = inplace ? drb : dsb;
    if (dst)
        for (int i = 0; i < n; i++)
            if (!rec || rec->mask[i])
                put(dst, k, (size_t)i, get(dst, k, (size_t)i) + get(t, vk, (size_t)i));
    free(t);
    if (rec) free(rec->mask), free(rec);
}
void __enzyme_cc_mpi_rev_reduce(RedRec *rec, void *sb, void *rb, int n, H dt, H op, int root,
                                H comm, void *dsb, void *drb, int k, int code) {
    (void)rb, (void)dt, (void)op, (void)code;
    reduce_rev(rec, sb, n, root, comm, dsb, drb, k, 0);
}
void __enzyme_cc_mpi_rev_allreduce(RedRec *rec, void *sb, void *rb, int n, H dt, H op, H comm,
                                   void *dsb, void *drb, int k, int code) {
    (void)rb, (void)dt, (void)op, (void)code;
    reduce_rev(rec, sb, n, 0, comm, dsb, drb, k, 1);
}
/* forward: the result's tangent is the sum of the inputs' (sum) or the winner's (max/min), for
 * each of the w lanes (the winners found once, by the primal's reduction) */
static int reduce_fwd(void *sb, void *rb, int n, H dt, H op, int root, H comm, void **dsb,
                      void **drb, int k, int code, int all, int w) {
    int me = rank_of(comm), inplace = sb == IN_PLACE, holds = all || me == root;
    int vk = isdbl(k) ? K_DOUBLE : K_FLOAT;
    void **tin = xcalloc((size_t)w, sizeof(void *));
    for (int l = 0; l < w; l++)         /* read before the call: in place, drb is also an input */
        tin[l] = vals(inplace ? drb[l] : dsb[l], k, n);
    Aug a = reduce_aug(sb, rb, n, dt, op, root, comm, k, code, all);
    RedRec *rec = a.rec;
    H vt = valtype(k);
    void *tout = vals(NULL, k, n);
    for (int l = 0; l < w; l++) {
        if (rec)
            for (int i = 0; i < n; i++)
                if (!rec->mask[i]) put(tin[l], vk, (size_t)i, 0.0);
        if (all) MPI_Allreduce(tin[l], tout, n, vt, SUM, comm);
        else MPI_Reduce(tin[l], tout, n, vt, SUM, root, comm);
        if (holds && drb[l])
            for (int i = 0; i < n; i++) put(drb[l], k, (size_t)i, get(tout, vk, (size_t)i));
        free(tin[l]);
    }
    free(tin), free(tout);
    if (rec) free(rec->mask), free(rec);
    return a.rc;
}
int __enzyme_cc_mpi_fwdv_reduce(void *sb, void *rb, int n, H dt, H op, int root, H comm,
                                void **dsb, void **drb, int k, int code, int w) {
    return reduce_fwd(sb, rb, n, dt, op, root, comm, dsb, drb, k, code, 0, w);
}
int __enzyme_cc_mpi_fwd_reduce(void *sb, void *rb, int n, H dt, H op, int root, H comm,
                               void *dsb, void *drb, int k, int code) {
    return reduce_fwd(sb, rb, n, dt, op, root, comm, &dsb, &drb, k, code, 0, 1);
}
int __enzyme_cc_mpi_fwdv_allreduce(void *sb, void *rb, int n, H dt, H op, H comm, void **dsb,
                                   void **drb, int k, int code, int w) {
    return reduce_fwd(sb, rb, n, dt, op, 0, comm, dsb, drb, k, code, 1, w);
}
int __enzyme_cc_mpi_fwd_allreduce(void *sb, void *rb, int n, H dt, H op, H comm, void *dsb,
                                  void *drb, int k, int code) {
    return reduce_fwd(sb, rb, n, dt, op, 0, comm, &dsb, &drb, k, code, 1, 1);
}

/* Prefix sums (MPI_SUM only: rules/mpi.py). Scan: y_r = sum_{j<=r} x_j, so x_r's adjoint is
 * sum_{j>=r} dy_j = total - (exclusive prefix of dy). Exscan: y_r = sum_{j<r} x_j (undefined on
 * rank 0, whose dy counts as zero), so x_r's adjoint is total - (inclusive prefix of dy). */
Aug __enzyme_cc_mpi_aug_scan(void *sb, void *rb, int n, H dt, H op, H comm, void *dsb, void *drb,
                             int k, int code) {
    (void)dsb, (void)drb, (void)k, (void)code;
    return (Aug){NULL, MPI_Scan(sb, rb, n, dt, op, comm)};
}
Aug __enzyme_cc_mpi_aug_exscan(void *sb, void *rb, int n, H dt, H op, H comm, void *dsb,
                               void *drb, int k, int code) {
    (void)dsb, (void)drb, (void)k, (void)code;
    return (Aug){NULL, MPI_Exscan(sb, rb, n, dt, op, comm)};
}
static void scan_rev(void *sb, int n, H dt, H comm, void *dsb, void *drb, int k, int ex) {
    int first = ex && rank_of(comm) == 0;
    void *t = copy(first ? NULL : drb, k, (size_t)n), *total = copy(t, k, (size_t)n);
    void *before = copy(NULL, k, (size_t)n);
    zero(drb, k, (size_t)n);
    MPI_Allreduce(IN_PLACE, total, n, dt, SUM, comm);
    if (ex) {
        MPI_Scan(t, before, n, dt, SUM, comm);
    } else {
        MPI_Exscan(t, before, n, dt, SUM, comm);
        if (rank_of(comm) == 0) zero(before, k, (size_t)n);     /* (left undefined there) */
    }
    void *dst = sb == IN_PLACE ? drb : dsb;
    if (dst)
        for (int i = 0; i < n; i++)
            put(dst, k, (size_t)i, get(dst, k, (size_t)i) + get(total, k, (size_t)i) -
                                   get(before, k, (size_t)i));
    free(t), free(total), free(before);
}
void __enzyme_cc_mpi_rev_scan(void *rec, void *sb, void *rb, int n, H dt, H op, H comm, void *dsb,
                              void *drb, int k, int code) {
    (void)rec, (void)rb, (void)op, (void)code;
    scan_rev(sb, n, dt, comm, dsb, drb, k, 0);
}
void __enzyme_cc_mpi_rev_exscan(void *rec, void *sb, void *rb, int n, H dt, H op, H comm,
                                void *dsb, void *drb, int k, int code) {
    (void)rec, (void)rb, (void)op, (void)code;
    scan_rev(sb, n, dt, comm, dsb, drb, k, 1);
}
/* forward: the results' tangents are the same prefix sums of the inputs' (Exscan leaves rank 0's
 * result, and its tangent, as they were) */
static int scan_fwd(void *sb, void *rb, int n, H dt, H op, H comm, void **dsb, void **drb, int k,
                    int ex, int w) {
    void **tin = xcalloc((size_t)w, sizeof(void *));
    for (int l = 0; l < w; l++)         /* read before the call: in place, drb is also an input */
        tin[l] = copy(sb == IN_PLACE ? drb[l] : dsb[l], k, (size_t)n);
    int rc = ex ? MPI_Exscan(sb, rb, n, dt, op, comm) : MPI_Scan(sb, rb, n, dt, op, comm);
    void *tout = copy(NULL, k, (size_t)n);
    for (int l = 0; l < w; l++) {
        if (ex) MPI_Exscan(tin[l], tout, n, dt, SUM, comm);
        else MPI_Scan(tin[l], tout, n, dt, SUM, comm);
        if (drb[l] && !(ex && rank_of(comm) == 0)) memcpy(drb[l], tout, (size_t)n * esz(k));
        free(tin[l]);
    }
    free(tin), free(tout);
    return rc;
}
int __enzyme_cc_mpi_fwdv_scan(void *sb, void *rb, int n, H dt, H op, H comm, void **dsb,
                              void **drb, int k, int code, int w) {
    (void)code;
    return scan_fwd(sb, rb, n, dt, op, comm, dsb, drb, k, 0, w);
}
int __enzyme_cc_mpi_fwd_scan(void *sb, void *rb, int n, H dt, H op, H comm, void *dsb, void *drb,
                             int k, int code) {
    (void)code;
    return scan_fwd(sb, rb, n, dt, op, comm, &dsb, &drb, k, 0, 1);
}
int __enzyme_cc_mpi_fwdv_exscan(void *sb, void *rb, int n, H dt, H op, H comm, void **dsb,
                                void **drb, int k, int code, int w) {
    (void)code;
    return scan_fwd(sb, rb, n, dt, op, comm, dsb, drb, k, 1, w);
}
int __enzyme_cc_mpi_fwd_exscan(void *sb, void *rb, int n, H dt, H op, H comm, void *dsb,
                               void *drb, int k, int code) {
    (void)code;
    return scan_fwd(sb, rb, n, dt, op, comm, &dsb, &drb, k, 1, 1);
}

/* Gather <-> Scatter, Allgather -> Reduce_scatter_block, Alltoall -> Alltoall */
Aug __enzyme_cc_mpi_aug_gather(void *sb, int sn, H sdt, void *rb, int rn, H rdt, int root, H comm,
                               void *dsb, void *drb, int sk, int rk) {
    (void)dsb, (void)drb, (void)sk, (void)rk;
    return (Aug){NULL, MPI_Gather(sb, sn, sdt, rb, rn, rdt, root, comm)};
}
void __enzyme_cc_mpi_rev_gather(void *rec, void *sb, int sn, H sdt, void *rb, int rn, H rdt,
                                int root, H comm, void *dsb, void *drb, int sk, int rk) {
    (void)rec, (void)sb, (void)rb;
    size_t all = (size_t)rn * (size_t)size_of(comm);
    int isroot = rank_of(comm) == root;
    void *out = copy(isroot ? drb : NULL, rk, all), *in = copy(NULL, sk, (size_t)sn);
    if (isroot) zero(drb, rk, all);
    MPI_Scatter(out, rn, rdt, in, sn, sdt, root, comm);
    add(dsb, in, sk, (size_t)sn);
    free(out), free(in);
}
/* one lane's tangent of gather */
static void tan_gather(void *sb, int sn, H sdt, void *rb, int rn, H rdt, int root, H comm,
                       void *dsb, void *drb, int sk, int rk) {
    size_t all = rank_of(comm) == root ? (size_t)rn * (size_t)size_of(comm) : 0;
    void *in = copy(dsb, sk, (size_t)sn), *out = drb ? drb : copy(NULL, rk, all);
    MPI_Gather(in, sn, sdt, out, rn, rdt, root, comm);
    free(in);
    if (out != drb) free(out);
}
int __enzyme_cc_mpi_fwdv_gather(void *sb, int sn, H sdt, void *rb, int rn, H rdt, int root,
                                H comm, void **dsb, void **drb, int sk, int rk, int w) {
    int rc = MPI_Gather(sb, sn, sdt, rb, rn, rdt, root, comm);
    for (int l = 0; l < w; l++) tan_gather(sb, sn, sdt, rb, rn, rdt, root, comm, dsb[l], drb[l],
                                           sk, rk);
    return rc;
}
int __enzyme_cc_mpi_fwd_gather(void *sb, int sn, H sdt, void *rb, int rn, H rdt, int root, H comm,
                               void *dsb, void *drb, int sk, int rk) {
    return __enzyme_cc_mpi_fwdv_gather(sb, sn, sdt, rb, rn, rdt, root, comm, &dsb, &drb, sk, rk,
                                       1);
}
typedef struct { int *counts, *displs; } VRec;
static VRec *vrec(const int *counts, const int *displs, int n) {
    VRec *r = xcalloc(1, sizeof *r);
    r->counts = icopy(counts, n), r->displs = icopy(displs, n);
    return r;
}
static void vfree(VRec *r) { if (r) free(r->counts), free(r->displs), free(r); }
static void add_segments(void *d, const void *s, int k, const int *c, const int *dp, int n) {
    for (int i = 0; i < n; i++)
        if (c[i] > 0) add(d ? (char *)d + (size_t)dp[i] * esz(k) : NULL, (const char *)s + (size_t)dp[i] * esz(k), k, (size_t)c[i]);
}
static void zero_segments(void *d, int k, const int *c, const int *dp, int n) {
    for (int i = 0; i < n; i++)
        if (c[i] > 0 && d) zero((char *)d + (size_t)dp[i] * esz(k), k, (size_t)c[i]);
}

Aug __enzyme_cc_mpi_aug_gatherv(void *sb, int sn, H sdt, void *rb, int *rc_, int *dp, H rdt,
                                int root, H comm, void *dsb, void *drb, int sk, int rk) {
    (void)dsb, (void)drb, (void)sk, (void)rk;
    int rc = MPI_Gatherv(sb, sn, sdt, rb, rc_, dp, rdt, root, comm);
    return (Aug){rank_of(comm) == root ? vrec(rc_, dp, size_of(comm)) : NULL, rc};
}
void __enzyme_cc_mpi_rev_gatherv(VRec *rec, void *sb, int sn, H sdt, void *rb, int *rc_, int *dp,
                                 H rdt, int root, H comm, void *dsb, void *drb, int sk, int rk) {
    (void)sb, (void)rb, (void)rc_, (void)dp;
    int p = size_of(comm);
    void *out = NULL, *in = copy(NULL, sk, (size_t)sn);
    if (rec) {
        out = copy(drb, rk, span(rec->counts, rec->displs, p));
        zero_segments(drb, rk, rec->counts, rec->displs, p);
    }
    MPI_Scatterv(out, rec ? rec->counts : NULL, rec ? rec->displs : NULL, rdt, in, sn, sdt, root, comm);
    add(dsb, in, sk, (size_t)sn);
    free(out), free(in), vfree(rec);
}
/* one lane's tangent of gatherv */
static void tan_gatherv(void *sb, int sn, H sdt, void *rb, int *rc_, int *dp, H rdt, int root,
                        H comm, void *dsb, void *drb, int sk, int rk) {
    int isroot = rank_of(comm) == root;
    void *in = copy(dsb, sk, (size_t)sn);
    void *out = drb || !isroot ? drb : copy(NULL, rk, span(rc_, dp, size_of(comm)));
    MPI_Gatherv(in, sn, sdt, out, rc_, dp, rdt, root, comm);
    free(in);
    if (out != drb) free(out);
}
int __enzyme_cc_mpi_fwdv_gatherv(void *sb, int sn, H sdt, void *rb, int *rc_, int *dp, H rdt,
                                 int root, H comm, void **dsb, void **drb, int sk, int rk, int w) {
    int rc = MPI_Gatherv(sb, sn, sdt, rb, rc_, dp, rdt, root, comm);
    for (int l = 0; l < w; l++) tan_gatherv(sb, sn, sdt, rb, rc_, dp, rdt, root, comm, dsb[l],
                                            drb[l], sk, rk);
    return rc;
}
int __enzyme_cc_mpi_fwd_gatherv(void *sb, int sn, H sdt, void *rb, int *rc_, int *dp, H rdt,
                                int root, H comm, void *dsb, void *drb, int sk, int rk) {
    return __enzyme_cc_mpi_fwdv_gatherv(sb, sn, sdt, rb, rc_, dp, rdt, root, comm, &dsb, &drb, sk,
                                        rk, 1);
}

Aug __enzyme_cc_mpi_aug_scatter(void *sb, int sn, H sdt, void *rb, int rn, H rdt, int root, H comm,
                                void *dsb, void *drb, int sk, int rk) {
    (void)dsb, (void)drb, (void)sk, (void)rk;
    return (Aug){NULL, MPI_Scatter(sb, sn, sdt, rb, rn, rdt, root, comm)};
}
void __enzyme_cc_mpi_rev_scatter(void *rec, void *sb, int sn, H sdt, void *rb, int rn, H rdt,
                                 int root, H comm, void *dsb, void *drb, int sk, int rk) {
    (void)rec, (void)sb, (void)rb;
    int isroot = rank_of(comm) == root;
    size_t all = isroot ? (size_t)sn * (size_t)size_of(comm) : 0;
    void *out = copy(drb, rk, (size_t)rn), *in = copy(NULL, sk, all);
    zero(drb, rk, (size_t)rn);
    MPI_Gather(out, rn, rdt, in, sn, sdt, root, comm);
    if (isroot) add(dsb, in, sk, all);
    free(out), free(in);
}
/* one lane's tangent of scatter */
static void tan_scatter(void *sb, int sn, H sdt, void *rb, int rn, H rdt, int root, H comm,
                        void *dsb, void *drb, int sk, int rk) {
    size_t all = rank_of(comm) == root ? (size_t)sn * (size_t)size_of(comm) : 0;
    void *in = copy(dsb, sk, all), *out = drb ? drb : copy(NULL, rk, (size_t)rn);
    MPI_Scatter(in, sn, sdt, out, rn, rdt, root, comm);
    free(in);
    if (out != drb) free(out);
}
int __enzyme_cc_mpi_fwdv_scatter(void *sb, int sn, H sdt, void *rb, int rn, H rdt, int root,
                                 H comm, void **dsb, void **drb, int sk, int rk, int w) {
    int rc = MPI_Scatter(sb, sn, sdt, rb, rn, rdt, root, comm);
    for (int l = 0; l < w; l++) tan_scatter(sb, sn, sdt, rb, rn, rdt, root, comm, dsb[l], drb[l],
                                            sk, rk);
    return rc;
}
int __enzyme_cc_mpi_fwd_scatter(void *sb, int sn, H sdt, void *rb, int rn, H rdt, int root,
                                H comm, void *dsb, void *drb, int sk, int rk) {
    return __enzyme_cc_mpi_fwdv_scatter(sb, sn, sdt, rb, rn, rdt, root, comm, &dsb, &drb, sk, rk,
                                        1);
}
Aug __enzyme_cc_mpi_aug_scatterv(void *sb, int *sc, int *dp, H sdt, void *rb, int rn, H rdt,
                                 int root, H comm, void *dsb, void *drb, int sk, int rk) {
    (void)dsb, (void)drb, (void)sk, (void)rk;
    int rc = MPI_Scatterv(sb, sc, dp, sdt, rb, rn, rdt, root, comm);
    return (Aug){rank_of(comm) == root ? vrec(sc, dp, size_of(comm)) : NULL, rc};
}
void __enzyme_cc_mpi_rev_scatterv(VRec *rec, void *sb, int *sc, int *dp, H sdt, void *rb, int rn,
                                  H rdt, int root, H comm, void *dsb, void *drb, int sk, int rk) {
    (void)sb, (void)sc, (void)dp, (void)rb;
    int p = size_of(comm);
    void *out = copy(drb, rk, (size_t)rn);
    void *in = rec ? copy(NULL, sk, span(rec->counts, rec->displs, p)) : NULL;
    zero(drb, rk, (size_t)rn);
    MPI_Gatherv(out, rn, rdt, in, rec ? rec->counts : NULL, rec ? rec->displs : NULL, sdt, root, comm);
    if (rec) add_segments(dsb, in, sk, rec->counts, rec->displs, p);
    free(out), free(in), vfree(rec);
}
/* one lane's tangent of scatterv */
static void tan_scatterv(void *sb, int *sc, int *dp, H sdt, void *rb, int rn, H rdt, int root,
                         H comm, void *dsb, void *drb, int sk, int rk) {
    int isroot = rank_of(comm) == root;
    void *in = isroot ? copy(dsb, sk, span(sc, dp, size_of(comm))) : NULL;
    void *out = drb ? drb : copy(NULL, rk, (size_t)rn);
    MPI_Scatterv(in, sc, dp, sdt, out, rn, rdt, root, comm);
    free(in);
    if (out != drb) free(out);
}
int __enzyme_cc_mpi_fwdv_scatterv(void *sb, int *sc, int *dp, H sdt, void *rb, int rn, H rdt,
                                  int root, H comm, void **dsb, void **drb, int sk, int rk,
                                  int w) {
    int rc = MPI_Scatterv(sb, sc, dp, sdt, rb, rn, rdt, root, comm);
    for (int l = 0; l < w; l++) tan_scatterv(sb, sc, dp, sdt, rb, rn, rdt, root, comm, dsb[l],
                                             drb[l], sk, rk);
    return rc;
}
int __enzyme_cc_mpi_fwd_scatterv(void *sb, int *sc, int *dp, H sdt, void *rb, int rn, H rdt,
                                 int root, H comm, void *dsb, void *drb, int sk, int rk) {
    return __enzyme_cc_mpi_fwdv_scatterv(sb, sc, dp, sdt, rb, rn, rdt, root, comm, &dsb, &drb, sk,
                                         rk, 1);
}

Aug __enzyme_cc_mpi_aug_allgather(void *sb, int sn, H sdt, void *rb, int rn, H rdt, H comm,
                                  void *dsb, void *drb, int sk, int rk) {
    (void)dsb, (void)drb, (void)sk, (void)rk;
    return (Aug){NULL, MPI_Allgather(sb, sn, sdt, rb, rn, rdt, comm)};
}
/* rank r's input adjoint: the sum over ranks of their result adjoints' block r */
void __enzyme_cc_mpi_rev_allgather(void *rec, void *sb, int sn, H sdt, void *rb, int rn, H rdt,
                                   H comm, void *dsb, void *drb, int sk, int rk) {
    (void)rec, (void)sb, (void)rb, (void)sdt;
    size_t all = (size_t)rn * (size_t)size_of(comm);
    void *out = copy(drb, rk, all), *in = copy(NULL, rk, (size_t)rn);
    zero(drb, rk, all);
    MPI_Reduce_scatter_block(out, in, rn, rdt, SUM, comm);
    add(dsb, in, sk, (size_t)(sn < rn ? sn : rn));
    free(out), free(in);
}
/* one lane's tangent of allgather */
static void tan_allgather(void *sb, int sn, H sdt, void *rb, int rn, H rdt, H comm, void *dsb,
                          void *drb, int sk, int rk) {
    size_t all = (size_t)rn * (size_t)size_of(comm);
    void *in = copy(dsb, sk, (size_t)sn), *out = drb ? drb : copy(NULL, rk, all);
    MPI_Allgather(in, sn, sdt, out, rn, rdt, comm);
    free(in);
    if (out != drb) free(out);
}
int __enzyme_cc_mpi_fwdv_allgather(void *sb, int sn, H sdt, void *rb, int rn, H rdt, H comm,
                                   void **dsb, void **drb, int sk, int rk, int w) {
    int rc = MPI_Allgather(sb, sn, sdt, rb, rn, rdt, comm);
    for (int l = 0; l < w; l++) tan_allgather(sb, sn, sdt, rb, rn, rdt, comm, dsb[l], drb[l], sk,
                                              rk);
    return rc;
}
int __enzyme_cc_mpi_fwd_allgather(void *sb, int sn, H sdt, void *rb, int rn, H rdt, H comm,
                                  void *dsb, void *drb, int sk, int rk) {
    return __enzyme_cc_mpi_fwdv_allgather(sb, sn, sdt, rb, rn, rdt, comm, &dsb, &drb, sk, rk, 1);
}
Aug __enzyme_cc_mpi_aug_allgatherv(void *sb, int sn, H sdt, void *rb, int *rc_, int *dp, H rdt,
                                   H comm, void *dsb, void *drb, int sk, int rk) {
    (void)dsb, (void)drb, (void)sk, (void)rk;
    int rc = MPI_Allgatherv(sb, sn, sdt, rb, rc_, dp, rdt, comm);
    return (Aug){vrec(rc_, dp, size_of(comm)), rc};
}
/* block r of every rank's result adjoint goes back to rank r (an Alltoallv), which sums them */
void __enzyme_cc_mpi_rev_allgatherv(VRec *rec, void *sb, int sn, H sdt, void *rb, int *rc_,
                                    int *dp, H rdt, H comm, void *dsb, void *drb, int sk, int rk) {
    (void)sb, (void)rb, (void)rc_, (void)dp;
    int p = size_of(comm);
    void *out = copy(drb, rk, span(rec->counts, rec->displs, p));
    void *in = copy(NULL, sk, (size_t)sn * (size_t)p);
    int *ic = xcalloc((size_t)p, sizeof(int)), *id = xcalloc((size_t)p, sizeof(int));
    for (int i = 0; i < p; i++) ic[i] = sn, id[i] = i * sn;
    zero_segments(drb, rk, rec->counts, rec->displs, p);
    MPI_Alltoallv(out, rec->counts, rec->displs, rdt, in, ic, id, sdt, comm);
    for (int i = 0; i < p; i++) add(dsb, (char *)in + (size_t)i * (size_t)sn * esz(sk), sk, (size_t)sn);
    free(out), free(in), free(ic), free(id), vfree(rec);
}
/* one lane's tangent of allgatherv */
static void tan_allgatherv(void *sb, int sn, H sdt, void *rb, int *rc_, int *dp, H rdt, H comm,
                           void *dsb, void *drb, int sk, int rk) {
    void *in = copy(dsb, sk, (size_t)sn);
    void *out = drb ? drb : copy(NULL, rk, span(rc_, dp, size_of(comm)));
    MPI_Allgatherv(in, sn, sdt, out, rc_, dp, rdt, comm);
    free(in);
    if (out != drb) free(out);
}
int __enzyme_cc_mpi_fwdv_allgatherv(void *sb, int sn, H sdt, void *rb, int *rc_, int *dp, H rdt,
                                    H comm, void **dsb, void **drb, int sk, int rk, int w) {
    int rc = MPI_Allgatherv(sb, sn, sdt, rb, rc_, dp, rdt, comm);
    for (int l = 0; l < w; l++) tan_allgatherv(sb, sn, sdt, rb, rc_, dp, rdt, comm, dsb[l],
                                               drb[l], sk, rk);
    return rc;
}
int __enzyme_cc_mpi_fwd_allgatherv(void *sb, int sn, H sdt, void *rb, int *rc_, int *dp, H rdt,
                                   H comm, void *dsb, void *drb, int sk, int rk) {
    return __enzyme_cc_mpi_fwdv_allgatherv(sb, sn, sdt, rb, rc_, dp, rdt, comm, &dsb, &drb, sk,
                                           rk, 1);
}

Aug __enzyme_cc_mpi_aug_alltoall(void *sb, int sn, H sdt, void *rb, int rn, H rdt, H comm,
                                 void *dsb, void *drb, int sk, int rk) {
    (void)dsb, (void)drb, (void)sk, (void)rk;
    return (Aug){NULL, MPI_Alltoall(sb, sn, sdt, rb, rn, rdt, comm)};
}
void __enzyme_cc_mpi_rev_alltoall(void *rec, void *sb, int sn, H sdt, void *rb, int rn, H rdt,
                                  H comm, void *dsb, void *drb, int sk, int rk) {
    (void)rec, (void)sb, (void)rb;
    size_t p = (size_t)size_of(comm);
    void *out = copy(drb, rk, (size_t)rn * p), *in = copy(NULL, sk, (size_t)sn * p);
    zero(drb, rk, (size_t)rn * p);
    MPI_Alltoall(out, rn, rdt, in, sn, sdt, comm);
    add(dsb, in, sk, (size_t)sn * p);
    free(out), free(in);
}
/* one lane's tangent of alltoall */
static void tan_alltoall(void *sb, int sn, H sdt, void *rb, int rn, H rdt, H comm, void *dsb,
                         void *drb, int sk, int rk) {
    size_t p = (size_t)size_of(comm);
    void *in = copy(dsb, sk, (size_t)sn * p), *out = drb ? drb : copy(NULL, rk, (size_t)rn * p);
    MPI_Alltoall(in, sn, sdt, out, rn, rdt, comm);
    free(in);
    if (out != drb) free(out);
}
int __enzyme_cc_mpi_fwdv_alltoall(void *sb, int sn, H sdt, void *rb, int rn, H rdt, H comm,
                                  void **dsb, void **drb, int sk, int rk, int w) {
    int rc = MPI_Alltoall(sb, sn, sdt, rb, rn, rdt, comm);
    for (int l = 0; l < w; l++) tan_alltoall(sb, sn, sdt, rb, rn, rdt, comm, dsb[l], drb[l], sk,
                                             rk);
    return rc;
}
int __enzyme_cc_mpi_fwd_alltoall(void *sb, int sn, H sdt, void *rb, int rn, H rdt, H comm,
                                 void *dsb, void *drb, int sk, int rk) {
    return __enzyme_cc_mpi_fwdv_alltoall(sb, sn, sdt, rb, rn, rdt, comm, &dsb, &drb, sk, rk, 1);
}
typedef struct { VRec *s, *r; } V2Rec;
Aug __enzyme_cc_mpi_aug_alltoallv(void *sb, int *sc, int *sd, H sdt, void *rb, int *rc_, int *rd,
                                  H rdt, H comm, void *dsb, void *drb, int sk, int rk) {
    (void)dsb, (void)drb, (void)sk, (void)rk;
    int p = size_of(comm);
    int rc = MPI_Alltoallv(sb, sc, sd, sdt, rb, rc_, rd, rdt, comm);
    V2Rec *r = xcalloc(1, sizeof *r);
    r->s = vrec(sc, sd, p), r->r = vrec(rc_, rd, p);
    return (Aug){r, rc};
}
void __enzyme_cc_mpi_rev_alltoallv(V2Rec *rec, void *sb, int *sc, int *sd, H sdt, void *rb,
                                   int *rc_, int *rd, H rdt, H comm, void *dsb, void *drb, int sk,
                                   int rk) {
    (void)sb, (void)sc, (void)sd, (void)rb, (void)rc_, (void)rd;
    int p = size_of(comm);
    VRec *s = rec->s, *r = rec->r;
    void *out = copy(drb, rk, span(r->counts, r->displs, p));
    void *in = copy(NULL, sk, span(s->counts, s->displs, p));
    zero_segments(drb, rk, r->counts, r->displs, p);
    MPI_Alltoallv(out, r->counts, r->displs, rdt, in, s->counts, s->displs, sdt, comm);
    add_segments(dsb, in, sk, s->counts, s->displs, p);
    free(out), free(in), vfree(s), vfree(r), free(rec);
}
/* one lane's tangent of alltoallv */
static void tan_alltoallv(void *sb, int *sc, int *sd, H sdt, void *rb, int *rc_, int *rd, H rdt,
                          H comm, void *dsb, void *drb, int sk, int rk) {
    int p = size_of(comm);
    void *in = copy(dsb, sk, span(sc, sd, p));
    void *out = drb ? drb : copy(NULL, rk, span(rc_, rd, p));
    MPI_Alltoallv(in, sc, sd, sdt, out, rc_, rd, rdt, comm);
    free(in);
    if (out != drb) free(out);
}
int __enzyme_cc_mpi_fwdv_alltoallv(void *sb, int *sc, int *sd, H sdt, void *rb, int *rc_, int *rd,
                                   H rdt, H comm, void **dsb, void **drb, int sk, int rk, int w) {
    int rc = MPI_Alltoallv(sb, sc, sd, sdt, rb, rc_, rd, rdt, comm);
    for (int l = 0; l < w; l++) tan_alltoallv(sb, sc, sd, sdt, rb, rc_, rd, rdt, comm, dsb[l],
                                              drb[l], sk, rk);
    return rc;
}
int __enzyme_cc_mpi_fwd_alltoallv(void *sb, int *sc, int *sd, H sdt, void *rb, int *rc_, int *rd,
                                  H rdt, H comm, void *dsb, void *drb, int sk, int rk) {
    return __enzyme_cc_mpi_fwdv_alltoallv(sb, sc, sd, sdt, rb, rc_, rd, rdt, comm, &dsb, &drb, sk,
                                          rk, 1);
}
