/* enzyme-cc's MPI runtime (rules/mpi.py): the derivatives of MPI calls, written as MPI calls.
 * Compiled to bitcode at link time and linked into the derivative when it calls one of these.
 *
 *   __enzyme_cc_mpi_aug_X(primal args, shadows, kinds) -> {record, rc}: reverse mode's forward
 *       sweep: the primal call plus what its reverse needs that the arguments do not say (the
 *       actual source/tag/count of a receive, the winner of a max/min, copies of count arrays,
 *       the pending operation of a request);
 *   __enzyme_cc_mpi_rev_X(record, primal args, shadows, kinds): the adjoint communication;
 *   __enzyme_cc_mpi_fwd_X(primal args, shadows, kinds) -> rc: forward mode, primal and tangent.
 *
 * A null shadow is zero data: every rank takes part in every adjoint or tangent communication
 * whatever its own activity, so the communication pattern matches across ranks. Forward mode
 * sends primal and tangent of point-to-point messages in one message of twice the count
 * (matching, wildcards and ordering stay the primal's).
 *
 * Open MPI's ABI (handles are pointers, MPI_Status as below): the rules only call this for
 * datatypes and ops they recognised as Open MPI's predefined ones. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void *H;                 /* MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request */
typedef struct { int src, tag, error, cancelled; size_t ucount; } St;   /* MPI_Status */
typedef struct { void *rec; int rc; } Aug;

int MPI_Send(const void *, int, H, int, int, H);
int MPI_Recv(void *, int, H, int, int, H, St *);
int MPI_Isend(const void *, int, H, int, int, H, H *);
int MPI_Irecv(void *, int, H, int, int, H, H *);
int MPI_Wait(H *, St *);
int MPI_Waitall(int, H *, St *);
int MPI_Sendrecv(const void *, int, H, int, int, void *, int, H, int, int, H, St *);
int MPI_Bcast(void *, int, H, int, H);
int MPI_Reduce(const void *, void *, int, H, H, int, H);
int MPI_Allreduce(const void *, void *, int, H, H, H);
int MPI_Gather(const void *, int, H, void *, int, H, int, H);
int MPI_Gatherv(const void *, int, H, void *, const int *, const int *, H, int, H);
int MPI_Scatter(const void *, int, H, void *, int, H, int, H);
int MPI_Scatterv(const void *, const int *, const int *, H, void *, int, H, int, H);
int MPI_Allgather(const void *, int, H, void *, int, H, H);
int MPI_Allgatherv(const void *, int, H, void *, const int *, const int *, H, H);
int MPI_Alltoall(const void *, int, H, void *, int, H, H);
int MPI_Alltoallv(const void *, const int *, const int *, H, void *, const int *, const int *, H, H);
int MPI_Reduce_scatter_block(const void *, void *, int, H, H, H);
int MPI_Barrier(H);
int MPI_Comm_rank(H, int *);
int MPI_Comm_size(H, int *);
int MPI_Get_count(const St *, H, int *);
int MPI_Abort(H, int);
extern char ompi_mpi_op_sum, ompi_mpi_op_min, ompi_mpi_int, ompi_mpi_double, ompi_mpi_float,
    ompi_mpi_comm_world;
/* the helpers are private to the derivative object (a shared library has its own) */
#pragma GCC visibility push(hidden)
#define SUM ((H)&ompi_mpi_op_sum)
#define MIN ((H)&ompi_mpi_op_min)
#define INT ((H)&ompi_mpi_int)
#define IN_PLACE ((void *)1)

/* element kinds (rules/mpi.py KINDS); the op codes of reductions (rules/mpi.py OPS) */
enum { K_FLOAT, K_DOUBLE, K_FLOAT_INT, K_DOUBLE_INT };
enum { OP_SUM, OP_MAX, OP_MIN, OP_MAXLOC, OP_MINLOC };

static size_t esz(int k) { return k == K_FLOAT ? 4 : k == K_DOUBLE ? 8 : k == K_FLOAT_INT ? 8 : 16; }
static int isdbl(int k) { return k == K_DOUBLE || k == K_DOUBLE_INT; }
static H valtype(int k) { return isdbl(k) ? (H)&ompi_mpi_double : (H)&ompi_mpi_float; }

static void fatal(const char *what) {
    fprintf(stderr, "enzyme-cc: error: %s\n", what);
    MPI_Abort((H)&ompi_mpi_comm_world, 1);
    abort();
}

static void *xcalloc(size_t n, size_t s) {
    void *p = calloc(n ? n : 1, s ? s : 1);
    if (!p) fatal("out of memory in an MPI derivative");
    return p;
}

/* the value (float part) of element i */
static double get(const void *b, int k, size_t i) {
    const char *p = (const char *)b + i * esz(k);
    return isdbl(k) ? *(const double *)p : *(const float *)p;
}
static void put(void *b, int k, size_t i, double v) {
    char *p = (char *)b + i * esz(k);
    if (isdbl(k)) *(double *)p = v; else *(float *)p = (float)v;
}
/* d[i] += s[i] (values only), d null: dropped */
static void add(void *d, const void *s, int k, size_t n) {
    if (!d) return;
    for (size_t i = 0; i < n; i++) put(d, k, i, get(d, k, i) + get(s, k, i));
}
static void zero(void *d, int k, size_t n) {
    if (!d) return;
    for (size_t i = 0; i < n; i++) put(d, k, i, 0.0);
}
/* a fresh copy of n elements of d (zeros when d is null) */
static void *copy(const void *d, int k, size_t n) {
    void *t = xcalloc(n, esz(k));
    if (d) memcpy(t, d, n * esz(k));
    return t;
}
static int rank_of(H comm) { int r; MPI_Comm_rank(comm, &r); return r; }
static int size_of(H comm) { int s; MPI_Comm_size(comm, &s); return s; }
static int *icopy(const int *a, int n) {
    int *t = xcalloc((size_t)n, sizeof(int));
    memcpy(t, a, (size_t)n * sizeof(int));
    return t;
}
/* elements spanned by counts/displs */
static size_t span(const int *counts, const int *displs, int n) {
    size_t m = 0;
    for (int i = 0; i < n; i++)
        if (counts[i] > 0 && (size_t)(displs[i] + counts[i]) > m) m = (size_t)(displs[i] + counts[i]);
    return m;
}

/* ---- point to point ------------------------------------------------------------------------ */
typedef struct { int src, tag, count; } RecvRec;

/* reverse mode: a receive from MPI_ANY_SOURCE could match another rank's adjoint message */
static void no_wildcard(int src, const char *what) {
    char msg[200];
    if (src != -1) return;
    snprintf(msg, sizeof msg, "%s from MPI_ANY_SOURCE in reverse-mode differentiated code is not "
             "supported (it could receive another rank's adjoint message)", what);
    fatal(msg);
}

static RecvRec *recv_rec(const St *st, H dt) {
    RecvRec *r = xcalloc(1, sizeof *r);
    r->src = st->src, r->tag = st->tag;
    MPI_Get_count(st, dt, &r->count);
    if (r->count < 0) r->count = 0;
    return r;
}

Aug __enzyme_cc_mpi_aug_send(void *buf, int n, H dt, int dest, int tag, H comm, void *dbuf, int k) {
    (void)dbuf, (void)k;
    return (Aug){NULL, MPI_Send(buf, n, dt, dest, tag, comm)};
}
void __enzyme_cc_mpi_rev_send(void *rec, void *buf, int n, H dt, int dest, int tag, H comm,
                              void *dbuf, int k) {
    (void)rec, (void)buf;
    void *t = copy(NULL, k, (size_t)n);
    MPI_Recv(t, n, dt, dest, tag, comm, NULL);
    add(dbuf, t, k, (size_t)n);
    free(t);
}
Aug __enzyme_cc_mpi_aug_recv(void *buf, int n, H dt, int src, int tag, H comm, St *status,
                             void *dbuf, int k) {
    (void)dbuf, (void)k;
    St st;
    no_wildcard(src, "MPI_Recv");
    int rc = MPI_Recv(buf, n, dt, src, tag, comm, &st);
    if (status) *status = st;
    return (Aug){recv_rec(&st, dt), rc};
}
void __enzyme_cc_mpi_rev_recv(RecvRec *rec, void *buf, int n, H dt, int src, int tag, H comm,
                              St *status, void *dbuf, int k) {
    (void)buf, (void)n, (void)src, (void)tag, (void)status;
    void *t = copy(dbuf, k, (size_t)rec->count);
    zero(dbuf, k, (size_t)rec->count);
    MPI_Send(t, rec->count, dt, rec->src, rec->tag, comm);
    free(t), free(rec);
}

/* forward mode: one message [primal | tangent] */
static void *pack(const void *buf, const void *dbuf, int k, int n) {
    char *p = xcalloc(2 * (size_t)n, esz(k));
    memcpy(p, buf, (size_t)n * esz(k));
    if (dbuf) memcpy(p + (size_t)n * esz(k), dbuf, (size_t)n * esz(k));
    return p;
}
/* unpack a received [primal | tangent] message; the status reports the primal's count */
static void unpack(const char *p, void *buf, void *dbuf, int k, St *st, H dt) {
    int c = 0;
    MPI_Get_count(st, dt, &c);
    c = c > 0 ? c / 2 : 0;
    memcpy(buf, p, (size_t)c * esz(k));
    if (dbuf) memcpy(dbuf, p + (size_t)c * esz(k), (size_t)c * esz(k));
    st->ucount /= 2;
}
int __enzyme_cc_mpi_fwd_send(void *buf, int n, H dt, int dest, int tag, H comm, void *dbuf, int k) {
    void *p = pack(buf, dbuf, k, n);
    int rc = MPI_Send(p, 2 * n, dt, dest, tag, comm);
    free(p);
    return rc;
}
int __enzyme_cc_mpi_fwd_recv(void *buf, int n, H dt, int src, int tag, H comm, St *status,
                             void *dbuf, int k) {
    St st;
    char *p = xcalloc(2 * (size_t)n, esz(k));
    int rc = MPI_Recv(p, 2 * n, dt, src, tag, comm, &st);
    unpack(p, buf, dbuf, k, &st, dt);
    if (status) *status = st;
    free(p);
    return rc;
}

Aug __enzyme_cc_mpi_aug_sendrecv(void *sb, int sn, H sdt, int dest, int stag, void *rb, int rn,
                                 H rdt, int src, int rtag, H comm, St *status, void *dsb,
                                 void *drb, int sk, int rk) {
    (void)dsb, (void)drb, (void)sk, (void)rk;
    St st;
    no_wildcard(src, "MPI_Sendrecv");
    int rc = MPI_Sendrecv(sb, sn, sdt, dest, stag, rb, rn, rdt, src, rtag, comm, &st);
    if (status) *status = st;
    return (Aug){recv_rec(&st, rdt), rc};
}
void __enzyme_cc_mpi_rev_sendrecv(RecvRec *rec, void *sb, int sn, H sdt, int dest, int stag,
                                  void *rb, int rn, H rdt, int src, int rtag, H comm, St *status,
                                  void *dsb, void *drb, int sk, int rk) {
    (void)sb, (void)rb, (void)rn, (void)src, (void)rtag, (void)status;
    void *out = copy(drb, rk, (size_t)rec->count), *in = copy(NULL, sk, (size_t)sn);
    zero(drb, rk, (size_t)rec->count);
    MPI_Sendrecv(out, rec->count, rdt, rec->src, rec->tag, in, sn, sdt, dest, stag, comm, NULL);
    add(dsb, in, sk, (size_t)sn);
    free(out), free(in), free(rec);
}
int __enzyme_cc_mpi_fwd_sendrecv(void *sb, int sn, H sdt, int dest, int stag, void *rb, int rn,
                                 H rdt, int src, int rtag, H comm, St *status, void *dsb,
                                 void *drb, int sk, int rk) {
    St st;
    void *ps = pack(sb, dsb, sk, sn);
    char *pr = xcalloc(2 * (size_t)rn, esz(rk));
    int rc = MPI_Sendrecv(ps, 2 * sn, sdt, dest, stag, pr, 2 * rn, rdt, src, rtag, comm, &st);
    unpack(pr, rb, drb, rk, &st, rdt);
    if (status) *status = st;
    free(ps), free(pr);
    return rc;
}

/* ---- nonblocking: the pending operation of a request --------------------------------------- */
enum { ISEND, IRECV, FISEND, FIRECV };
typedef struct {
    int what, n, peer, tag, k, posted;
    H dt, comm, rev;          /* rev: the request of the adjoint communication */
    void *buf, *dbuf, *tmp;
} ReqRec;

/* primal request handle -> record, while the request is pending */
static struct { H key; ReqRec *rec; } *table;
static size_t table_n, table_cap;

static void table_put(H key, ReqRec *r) {
    if (table_n == table_cap) {
        table_cap = table_cap ? 2 * table_cap : 16;
        table = realloc(table, table_cap * sizeof *table);
        if (!table) fatal("out of memory in an MPI derivative");
    }
    table[table_n].key = key, table[table_n].rec = r, table_n++;
}
static ReqRec *table_take(H key) {
    for (size_t i = table_n; i-- > 0;)
        if (table[i].key == key) {
            ReqRec *r = table[i].rec;
            table[i] = table[--table_n];
            return r;
        }
    return NULL;
}
static ReqRec *req_rec(int what, void *buf, void *dbuf, int n, H dt, int peer, int tag, H comm,
                       int k) {
    ReqRec *r = xcalloc(1, sizeof *r);
    r->what = what, r->buf = buf, r->dbuf = dbuf, r->n = n, r->dt = dt, r->peer = peer;
    r->tag = tag, r->comm = comm, r->k = k;
    return r;
}

Aug __enzyme_cc_mpi_aug_isend(void *buf, int n, H dt, int dest, int tag, H comm, H *req,
                              void *dbuf, int k) {
    int rc = MPI_Isend(buf, n, dt, dest, tag, comm, req);
    ReqRec *r = req_rec(ISEND, buf, dbuf, n, dt, dest, tag, comm, k);
    table_put(*req, r);
    return (Aug){r, rc};
}
Aug __enzyme_cc_mpi_aug_irecv(void *buf, int n, H dt, int src, int tag, H comm, H *req,
                              void *dbuf, int k) {
    no_wildcard(src, "MPI_Irecv");
    int rc = MPI_Irecv(buf, n, dt, src, tag, comm, req);
    ReqRec *r = req_rec(IRECV, buf, dbuf, n, dt, src, tag, comm, k);
    table_put(*req, r);
    return (Aug){r, rc};
}
/* a completed receive: the message's actual source, tag and count */
static void completed(ReqRec *r, St *st) {
    if (r && r->what == IRECV) {
        r->peer = st->src, r->tag = st->tag;
        MPI_Get_count(st, r->dt, &r->n);
        if (r->n < 0) r->n = 0;
    }
}
Aug __enzyme_cc_mpi_aug_wait(H *req, St *status) {
    St st;
    ReqRec *r = table_take(*req);
    int rc = MPI_Wait(req, &st);
    completed(r, &st);
    if (status) *status = st;
    return (Aug){r, rc};
}
typedef struct { int n; ReqRec *recs[]; } AllRec;
Aug __enzyme_cc_mpi_aug_waitall(int n, H *reqs, St *statuses) {
    AllRec *a = xcalloc(1, sizeof *a + (size_t)n * sizeof(ReqRec *));
    St *st = xcalloc((size_t)n, sizeof(St));
    a->n = n;
    for (int i = 0; i < n; i++) a->recs[i] = table_take(reqs[i]);
    int rc = MPI_Waitall(n, reqs, st);
    for (int i = 0; i < n; i++) completed(a->recs[i], &st[i]);
    if (statuses) memcpy(statuses, st, (size_t)n * sizeof(St));
    free(st);
    return (Aug){a, rc};
}
/* reverse of the wait: start the adjoint communication (completed by the reverse of Isend/Irecv) */
static void post(ReqRec *r) {
    if (!r) return;
    if (r->what == ISEND) {
        r->tmp = copy(NULL, r->k, (size_t)r->n);
        MPI_Irecv(r->tmp, r->n, r->dt, r->peer, r->tag, r->comm, &r->rev);
    } else {
        r->tmp = copy(r->dbuf, r->k, (size_t)r->n);
        zero(r->dbuf, r->k, (size_t)r->n);
        MPI_Isend(r->tmp, r->n, r->dt, r->peer, r->tag, r->comm, &r->rev);
    }
    r->posted = 1;
}
void __enzyme_cc_mpi_rev_wait(ReqRec *rec, H *req, St *status) { (void)req, (void)status; post(rec); }
void __enzyme_cc_mpi_rev_waitall(AllRec *a, int n, H *reqs, St *statuses) {
    (void)n, (void)reqs, (void)statuses;
    for (int i = 0; i < a->n; i++) post(a->recs[i]);
    free(a);
}
static void finish(ReqRec *r, const char *what) {
    if (!r->posted) {
        char msg[200];
        snprintf(msg, sizeof msg, "the request of an %s was not completed by an MPI_Wait or "
                 "MPI_Waitall in differentiated code; its adjoint cannot be communicated", what);
        fatal(msg);
    }
    MPI_Wait(&r->rev, NULL);
    if (r->what == ISEND) add(r->dbuf, r->tmp, r->k, (size_t)r->n);
    free(r->tmp), free(r);
}
void __enzyme_cc_mpi_rev_isend(ReqRec *rec, void *buf, int n, H dt, int dest, int tag, H comm,
                               H *req, void *dbuf, int k) {
    (void)buf, (void)n, (void)dt, (void)dest, (void)tag, (void)comm, (void)req, (void)dbuf, (void)k;
    finish(rec, "MPI_Isend");
}
void __enzyme_cc_mpi_rev_irecv(ReqRec *rec, void *buf, int n, H dt, int src, int tag, H comm,
                               H *req, void *dbuf, int k) {
    (void)buf, (void)n, (void)dt, (void)src, (void)tag, (void)comm, (void)req, (void)dbuf, (void)k;
    finish(rec, "MPI_Irecv");
}

int __enzyme_cc_mpi_fwd_isend(void *buf, int n, H dt, int dest, int tag, H comm, H *req,
                              void *dbuf, int k) {
    void *p = pack(buf, dbuf, k, n);
    int rc = MPI_Isend(p, 2 * n, dt, dest, tag, comm, req);
    ReqRec *r = req_rec(FISEND, buf, dbuf, n, dt, dest, tag, comm, k);
    r->tmp = p;
    table_put(*req, r);
    return rc;
}
int __enzyme_cc_mpi_fwd_irecv(void *buf, int n, H dt, int src, int tag, H comm, H *req,
                              void *dbuf, int k) {
    void *p = xcalloc(2 * (size_t)n, esz(k));
    int rc = MPI_Irecv(p, 2 * n, dt, src, tag, comm, req);
    ReqRec *r = req_rec(FIRECV, buf, dbuf, n, dt, src, tag, comm, k);
    r->tmp = p;
    table_put(*req, r);
    return rc;
}
static void fwd_completed(ReqRec *r, St *st) {
    if (!r) return;
    if (r->what == FIRECV) unpack(r->tmp, r->buf, r->dbuf, r->k, st, r->dt);
    free(r->tmp), free(r);
}
int __enzyme_cc_mpi_fwd_wait(H *req, St *status) {
    St st;
    ReqRec *r = table_take(*req);
    int rc = MPI_Wait(req, &st);
    fwd_completed(r, &st);
    if (status) *status = st;
    return rc;
}
int __enzyme_cc_mpi_fwd_waitall(int n, H *reqs, St *statuses) {
    ReqRec **rs = xcalloc((size_t)n, sizeof *rs);
    St *st = xcalloc((size_t)n, sizeof(St));
    for (int i = 0; i < n; i++) rs[i] = table_take(reqs[i]);
    int rc = MPI_Waitall(n, reqs, st);
    for (int i = 0; i < n; i++) fwd_completed(rs[i], &st[i]);
    if (statuses) memcpy(statuses, st, (size_t)n * sizeof(St));
    free(rs), free(st);
    return rc;
}

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
int __enzyme_cc_mpi_fwd_bcast(void *buf, int n, H dt, int root, H comm, void *dbuf, int k) {
    int rc = MPI_Bcast(buf, n, dt, root, comm);
    void *t = dbuf ? dbuf : copy(NULL, k, (size_t)n);
    MPI_Bcast(t, n, dt, root, comm);
    if (t != dbuf) free(t);
    return rc;
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
/* forward: the result's tangent is the sum of the inputs' (sum) or the winner's (max/min) */
static int reduce_fwd(void *sb, void *rb, int n, H dt, H op, int root, H comm, void *dsb,
                      void *drb, int k, int code, int all) {
    int me = rank_of(comm), inplace = sb == IN_PLACE, holds = all || me == root;
    void *tin = vals(inplace ? drb : dsb, k, n);
    Aug a = reduce_aug(sb, rb, n, dt, op, root, comm, k, code, all);
    RedRec *rec = a.rec;
    if (rec)
        for (int i = 0; i < n; i++)
            if (!rec->mask[i]) put(tin, isdbl(k) ? K_DOUBLE : K_FLOAT, (size_t)i, 0.0);
    void *tout = vals(NULL, k, n);
    H vt = valtype(k);
    if (all) MPI_Allreduce(tin, tout, n, vt, SUM, comm);
    else MPI_Reduce(tin, tout, n, vt, SUM, root, comm);
    if (holds && drb)
        for (int i = 0; i < n; i++)
            put(drb, k, (size_t)i, get(tout, isdbl(k) ? K_DOUBLE : K_FLOAT, (size_t)i));
    free(tin), free(tout);
    if (rec) free(rec->mask), free(rec);
    return a.rc;
}
int __enzyme_cc_mpi_fwd_reduce(void *sb, void *rb, int n, H dt, H op, int root, H comm,
                               void *dsb, void *drb, int k, int code) {
    return reduce_fwd(sb, rb, n, dt, op, root, comm, dsb, drb, k, code, 0);
}
int __enzyme_cc_mpi_fwd_allreduce(void *sb, void *rb, int n, H dt, H op, H comm, void *dsb,
                                  void *drb, int k, int code) {
    return reduce_fwd(sb, rb, n, dt, op, 0, comm, dsb, drb, k, code, 1);
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
int __enzyme_cc_mpi_fwd_gather(void *sb, int sn, H sdt, void *rb, int rn, H rdt, int root, H comm,
                               void *dsb, void *drb, int sk, int rk) {
    int rc = MPI_Gather(sb, sn, sdt, rb, rn, rdt, root, comm);
    size_t all = rank_of(comm) == root ? (size_t)rn * (size_t)size_of(comm) : 0;
    void *in = copy(dsb, sk, (size_t)sn), *out = drb ? drb : copy(NULL, rk, all);
    MPI_Gather(in, sn, sdt, out, rn, rdt, root, comm);
    free(in);
    if (out != drb) free(out);
    return rc;
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
int __enzyme_cc_mpi_fwd_gatherv(void *sb, int sn, H sdt, void *rb, int *rc_, int *dp, H rdt,
                                int root, H comm, void *dsb, void *drb, int sk, int rk) {
    int rc = MPI_Gatherv(sb, sn, sdt, rb, rc_, dp, rdt, root, comm);
    int isroot = rank_of(comm) == root;
    void *in = copy(dsb, sk, (size_t)sn);
    void *out = drb || !isroot ? drb : copy(NULL, rk, span(rc_, dp, size_of(comm)));
    MPI_Gatherv(in, sn, sdt, out, rc_, dp, rdt, root, comm);
    free(in);
    if (out != drb) free(out);
    return rc;
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
int __enzyme_cc_mpi_fwd_scatter(void *sb, int sn, H sdt, void *rb, int rn, H rdt, int root, H comm,
                                void *dsb, void *drb, int sk, int rk) {
    int rc = MPI_Scatter(sb, sn, sdt, rb, rn, rdt, root, comm);
    size_t all = rank_of(comm) == root ? (size_t)sn * (size_t)size_of(comm) : 0;
    void *in = copy(dsb, sk, all), *out = drb ? drb : copy(NULL, rk, (size_t)rn);
    MPI_Scatter(in, sn, sdt, out, rn, rdt, root, comm);
    free(in);
    if (out != drb) free(out);
    return rc;
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
int __enzyme_cc_mpi_fwd_scatterv(void *sb, int *sc, int *dp, H sdt, void *rb, int rn, H rdt,
                                 int root, H comm, void *dsb, void *drb, int sk, int rk) {
    int rc = MPI_Scatterv(sb, sc, dp, sdt, rb, rn, rdt, root, comm);
    int isroot = rank_of(comm) == root;
    void *in = isroot ? copy(dsb, sk, span(sc, dp, size_of(comm))) : NULL;
    void *out = drb ? drb : copy(NULL, rk, (size_t)rn);
    MPI_Scatterv(in, sc, dp, sdt, out, rn, rdt, root, comm);
    free(in);
    if (out != drb) free(out);
    return rc;
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
int __enzyme_cc_mpi_fwd_allgather(void *sb, int sn, H sdt, void *rb, int rn, H rdt, H comm,
                                  void *dsb, void *drb, int sk, int rk) {
    int rc = MPI_Allgather(sb, sn, sdt, rb, rn, rdt, comm);
    size_t all = (size_t)rn * (size_t)size_of(comm);
    void *in = copy(dsb, sk, (size_t)sn), *out = drb ? drb : copy(NULL, rk, all);
    MPI_Allgather(in, sn, sdt, out, rn, rdt, comm);
    free(in);
    if (out != drb) free(out);
    return rc;
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
int __enzyme_cc_mpi_fwd_allgatherv(void *sb, int sn, H sdt, void *rb, int *rc_, int *dp, H rdt,
                                   H comm, void *dsb, void *drb, int sk, int rk) {
    int rc = MPI_Allgatherv(sb, sn, sdt, rb, rc_, dp, rdt, comm);
    void *in = copy(dsb, sk, (size_t)sn);
    void *out = drb ? drb : copy(NULL, rk, span(rc_, dp, size_of(comm)));
    MPI_Allgatherv(in, sn, sdt, out, rc_, dp, rdt, comm);
    free(in);
    if (out != drb) free(out);
    return rc;
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
int __enzyme_cc_mpi_fwd_alltoall(void *sb, int sn, H sdt, void *rb, int rn, H rdt, H comm,
                                 void *dsb, void *drb, int sk, int rk) {
    int rc = MPI_Alltoall(sb, sn, sdt, rb, rn, rdt, comm);
    size_t p = (size_t)size_of(comm);
    void *in = copy(dsb, sk, (size_t)sn * p), *out = drb ? drb : copy(NULL, rk, (size_t)rn * p);
    MPI_Alltoall(in, sn, sdt, out, rn, rdt, comm);
    free(in);
    if (out != drb) free(out);
    return rc;
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
int __enzyme_cc_mpi_fwd_alltoallv(void *sb, int *sc, int *sd, H sdt, void *rb, int *rc_, int *rd,
                                  H rdt, H comm, void *dsb, void *drb, int sk, int rk) {
    int rc = MPI_Alltoallv(sb, sc, sd, sdt, rb, rc_, rd, rdt, comm);
    int p = size_of(comm);
    void *in = copy(dsb, sk, span(sc, sd, p));
    void *out = drb ? drb : copy(NULL, rk, span(rc_, rd, p));
    MPI_Alltoallv(in, sc, sd, sdt, out, rc_, rd, rdt, comm);
    free(in);
    if (out != drb) free(out);
    return rc;
}
