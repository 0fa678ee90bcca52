/* enzyme-cc's MPI runtime: point-to-point and nonblocking calls (see mpi_runtime.h). */
#include "mpi_runtime.h"

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
    r->src = st->src, r->tag = st->tag < 0 ? 0 : st->tag;   /* MPI_PROC_NULL: MPI_ANY_TAG */
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

/* forward mode: one message [primal | tangent of lane 0 | ... | tangent of lane w-1] (w > 1:
 * vector forward mode, enzyme_width; dl[l] is lane l's shadow, null: zero data) */
static void *pack(const void *buf, void *const *dl, int w, int k, int n) {
    size_t b = (size_t)n * esz(k);
    char *p = xcalloc((size_t)(w + 1) * (size_t)n, esz(k));
    memcpy(p, buf, b);
    for (int l = 0; l < w; l++)
        if (dl[l]) memcpy(p + (size_t)(l + 1) * b, dl[l], b);
    return p;
}
/* unpack a received message; the status reports the primal's count */
static void unpack(const char *p, void *buf, void *const *dl, int w, int k, St *st, H dt) {
    int c = 0;
    MPI_Get_count(st, dt, &c);
    c = c > 0 ? c / (w + 1) : 0;
    size_t b = (size_t)c * esz(k);
    memcpy(buf, p, b);
    for (int l = 0; l < w; l++)
        if (dl[l]) memcpy(dl[l], p + (size_t)(l + 1) * b, b);
    st->ucount /= (size_t)(w + 1);
}
int __enzyme_cc_mpi_fwdv_send(void *buf, int n, H dt, int dest, int tag, H comm, void **dl, int k,
                              int w) {
    void *p = pack(buf, dl, w, k, n);
    int rc = MPI_Send(p, (w + 1) * n, dt, dest, tag, comm);
    free(p);
    return rc;
}
int __enzyme_cc_mpi_fwd_send(void *buf, int n, H dt, int dest, int tag, H comm, void *dbuf, int k) {
    return __enzyme_cc_mpi_fwdv_send(buf, n, dt, dest, tag, comm, &dbuf, k, 1);
}
int __enzyme_cc_mpi_fwdv_recv(void *buf, int n, H dt, int src, int tag, H comm, St *status,
                              void **dl, int k, int w) {
    St st;
    char *p = xcalloc((size_t)(w + 1) * (size_t)n, esz(k));
    int rc = MPI_Recv(p, (w + 1) * n, dt, src, tag, comm, &st);
    unpack(p, buf, dl, w, k, &st, dt);
    if (status) *status = st;
    free(p);
    return rc;
}
int __enzyme_cc_mpi_fwd_recv(void *buf, int n, H dt, int src, int tag, H comm, St *status,
                             void *dbuf, int k) {
    return __enzyme_cc_mpi_fwdv_recv(buf, n, dt, src, tag, comm, status, &dbuf, k, 1);
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
int __enzyme_cc_mpi_fwdv_sendrecv(void *sb, int sn, H sdt, int dest, int stag, void *rb, int rn,
                                  H rdt, int src, int rtag, H comm, St *status, void **dsb,
                                  void **drb, int sk, int rk, int w) {
    St st;
    void *ps = pack(sb, dsb, w, sk, sn);
    char *pr = xcalloc((size_t)(w + 1) * (size_t)rn, esz(rk));
    int rc = MPI_Sendrecv(ps, (w + 1) * sn, sdt, dest, stag, pr, (w + 1) * rn, rdt, src, rtag, comm,
                          &st);
    unpack(pr, rb, drb, w, rk, &st, rdt);
    if (status) *status = st;
    free(ps), free(pr);
    return rc;
}
int __enzyme_cc_mpi_fwd_sendrecv(void *sb, int sn, H sdt, int dest, int stag, void *rb, int rn,
                                 H rdt, int src, int rtag, H comm, St *status, void *dsb,
                                 void *drb, int sk, int rk) {
    return __enzyme_cc_mpi_fwdv_sendrecv(sb, sn, sdt, dest, stag, rb, rn, rdt, src, rtag, comm,
                                         status, &dsb, &drb, sk, rk, 1);
}

/* ---- nonblocking: the pending operation of a request --------------------------------------- */
enum { ISEND, IRECV, FISEND, FIRECV };
typedef struct {
    int what, n, peer, tag, k, posted, w;
    H dt, comm, rev;          /* rev: the request of the adjoint communication */
    void *buf, *dbuf, *tmp;
    void **dl;                /* forward mode: the w lanes' shadows (dbuf: unused) */
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
        r->peer = st->src, r->tag = st->tag < 0 ? 0 : st->tag;
        MPI_Get_count(st, r->dt, &r->n);
        if (r->n < 0) r->n = 0;
    }
}
Aug __enzyme_cc_mpi_aug_wait(H *req, St *status) {
    St st;
    ReqRec *r = table_take(*req);
    int rc = PMPI_Wait(req, &st);
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
    int rc = PMPI_Waitall(n, reqs, st);
    for (int i = 0; i < n; i++) completed(a->recs[i], &st[i]);
    if (statuses) memcpy(statuses, st, (size_t)n * sizeof(St));
    free(st);
    return (Aug){a, rc};
}
/* a copy of the request handles: MPI sets those it completes to MPI_REQUEST_NULL */
static H *saved(int n, const H *reqs) {
    H *keys = xcalloc(n > 0 ? (size_t)n : 1, sizeof *keys);
    memcpy(keys, reqs, (size_t)(n > 0 ? n : 0) * sizeof *keys);
    return keys;
}
/* MPI_Test and MPI_Testall: a wait where they complete (Testall completes all or none) */
__attribute__((visibility("default"))) int PMPI_Test(H *, int *, St *);
__attribute__((visibility("default"))) int PMPI_Testall(int, H *, int *, St *);
Aug __enzyme_cc_mpi_aug_test(H *req, int *flag, St *status) {
    St st;
    H key = *req;
    int rc = PMPI_Test(req, flag, &st);
    ReqRec *r = NULL;
    if (*flag) {
        r = table_take(key);
        completed(r, &st);
        if (status) *status = st;
    }
    return (Aug){r, rc};
}
Aug __enzyme_cc_mpi_aug_testall(int n, H *reqs, int *flag, St *statuses) {
    H *keys = saved(n, reqs);
    St *st = xcalloc(n > 0 ? (size_t)n : 1, sizeof(St));
    int rc = PMPI_Testall(n, reqs, flag, st);
    AllRec *a = NULL;
    if (*flag) {
        a = xcalloc(1, sizeof *a + (size_t)n * sizeof(ReqRec *));
        a->n = n;
        for (int i = 0; i < n; i++) completed(a->recs[i] = table_take(keys[i]), &st[i]);
        if (statuses) memcpy(statuses, st, (size_t)n * sizeof(St));
    }
    free(keys), free(st);
    return (Aug){a, rc};
}
/* MPI_Waitany, Testany, Waitsome and Testsome: a wait for the requests they complete (none
 * where the index or count is MPI_UNDEFINED, negative in Open MPI) */
__attribute__((visibility("default"))) int PMPI_Testany(int, H *, int *, int *, St *);
__attribute__((visibility("default"))) int PMPI_Testsome(int, H *, int *, int *, St *);
__attribute__((visibility("default"))) int PMPI_Waitany(int, H *, int *, St *);
__attribute__((visibility("default"))) int PMPI_Waitsome(int, H *, int *, int *, St *);
static AllRec *completed_at(const H *keys, int count, const int *indices, St *st) {
    if (count <= 0) return NULL;
    AllRec *a = xcalloc(1, sizeof *a + (size_t)count * sizeof(ReqRec *));
    a->n = count;
    for (int i = 0; i < count; i++) completed(a->recs[i] = table_take(keys[indices[i]]), &st[i]);
    return a;
}
Aug __enzyme_cc_mpi_aug_waitany(int n, H *reqs, int *index, St *status) {
    H *keys = saved(n, reqs);
    St st;
    int rc = PMPI_Waitany(n, reqs, index, &st);
    AllRec *a = completed_at(keys, *index >= 0, index, &st);
    if (status) *status = st;
    free(keys);
    return (Aug){a, rc};
}
Aug __enzyme_cc_mpi_aug_testany(int n, H *reqs, int *index, int *flag, St *status) {
    H *keys = saved(n, reqs);
    St st;
    int rc = PMPI_Testany(n, reqs, index, flag, &st);
    AllRec *a = completed_at(keys, *flag && *index >= 0, index, &st);
    if (status && *flag) *status = st;
    free(keys);
    return (Aug){a, rc};
}
static Aug some(int n, H *reqs, int *count, int *indices, St *statuses, int wait) {
    H *keys = saved(n, reqs);
    St *st = xcalloc(n > 0 ? (size_t)n : 1, sizeof(St));
    int rc = wait ? PMPI_Waitsome(n, reqs, count, indices, st)
                  : PMPI_Testsome(n, reqs, count, indices, st);
    AllRec *a = completed_at(keys, *count, indices, st);
    if (statuses && *count > 0) memcpy(statuses, st, (size_t)*count * sizeof(St));
    free(keys), free(st);
    return (Aug){a, rc};
}
Aug __enzyme_cc_mpi_aug_waitsome(int n, H *reqs, int *count, int *indices, St *statuses) {
    return some(n, reqs, count, indices, statuses, 1);
}
Aug __enzyme_cc_mpi_aug_testsome(int n, H *reqs, int *count, int *indices, St *statuses) {
    return some(n, reqs, count, indices, statuses, 0);
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
static void post_all(AllRec *a) {
    if (!a) return;
    for (int i = 0; i < a->n; i++) post(a->recs[i]);
    free(a);
}
void __enzyme_cc_mpi_rev_wait(ReqRec *rec, H *req, St *status) { (void)req, (void)status; post(rec); }
void __enzyme_cc_mpi_rev_test(ReqRec *rec, H *req, int *flag, St *status) {
    (void)req, (void)flag, (void)status;
    post(rec);
}
void __enzyme_cc_mpi_rev_testall(AllRec *a, int n, H *reqs, int *flag, St *statuses) {
    (void)n, (void)reqs, (void)flag, (void)statuses;
    post_all(a);
}
void __enzyme_cc_mpi_rev_waitall(AllRec *a, int n, H *reqs, St *statuses) {
    (void)n, (void)reqs, (void)statuses;
    post_all(a);
}
void __enzyme_cc_mpi_rev_waitany(AllRec *a, int n, H *reqs, int *index, St *status) {
    (void)n, (void)reqs, (void)index, (void)status;
    post_all(a);
}
void __enzyme_cc_mpi_rev_testany(AllRec *a, int n, H *reqs, int *index, int *flag, St *status) {
    (void)n, (void)reqs, (void)index, (void)flag, (void)status;
    post_all(a);
}
void __enzyme_cc_mpi_rev_waitsome(AllRec *a, int n, H *reqs, int *count, int *indices,
                                  St *statuses) {
    (void)n, (void)reqs, (void)count, (void)indices, (void)statuses;
    post_all(a);
}
void __enzyme_cc_mpi_rev_testsome(AllRec *a, int n, H *reqs, int *count, int *indices,
                                  St *statuses) {
    (void)n, (void)reqs, (void)count, (void)indices, (void)statuses;
    post_all(a);
}
static void finish(ReqRec *r, const char *what) {
    if (!r->posted) {
        char msg[320];
        snprintf(msg, sizeof msg, "the request of an %s (%s rank %d, tag %d, %d elements) was "
                 "not completed by an MPI_Wait, Waitall, Waitany, Waitsome or a Test in "
                 "differentiated code; its adjoint cannot be communicated", what,
                 r->what == ISEND ? "to" : "from", r->peer, r->tag, r->n);
        fatal(msg);
    }
    PMPI_Wait(&r->rev, NULL);
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

static ReqRec *fwd_rec(int what, void *buf, void **dl, int w, int n, H dt, int peer, int tag,
                       H comm, int k, void *msg) {
    ReqRec *r = req_rec(what, buf, NULL, n, dt, peer, tag, comm, k);
    r->w = w, r->tmp = msg, r->dl = xcalloc((size_t)w, sizeof(void *));
    memcpy(r->dl, dl, (size_t)w * sizeof(void *));
    return r;
}
int __enzyme_cc_mpi_fwdv_isend(void *buf, int n, H dt, int dest, int tag, H comm, H *req,
                               void **dl, int k, int w) {
    void *p = pack(buf, dl, w, k, n);
    int rc = MPI_Isend(p, (w + 1) * n, dt, dest, tag, comm, req);
    table_put(*req, fwd_rec(FISEND, buf, dl, w, n, dt, dest, tag, comm, k, p));
    return rc;
}
int __enzyme_cc_mpi_fwd_isend(void *buf, int n, H dt, int dest, int tag, H comm, H *req,
                              void *dbuf, int k) {
    return __enzyme_cc_mpi_fwdv_isend(buf, n, dt, dest, tag, comm, req, &dbuf, k, 1);
}
int __enzyme_cc_mpi_fwdv_irecv(void *buf, int n, H dt, int src, int tag, H comm, H *req,
                               void **dl, int k, int w) {
    void *p = xcalloc((size_t)(w + 1) * (size_t)n, esz(k));
    int rc = MPI_Irecv(p, (w + 1) * n, dt, src, tag, comm, req);
    table_put(*req, fwd_rec(FIRECV, buf, dl, w, n, dt, src, tag, comm, k, p));
    return rc;
}
int __enzyme_cc_mpi_fwd_irecv(void *buf, int n, H dt, int src, int tag, H comm, H *req,
                              void *dbuf, int k) {
    return __enzyme_cc_mpi_fwdv_irecv(buf, n, dt, src, tag, comm, req, &dbuf, k, 1);
}
static void fwd_completed(ReqRec *r, St *st) {
    if (!r) return;
    if (r->what == FIRECV) unpack(r->tmp, r->buf, r->dl, r->w, r->k, st, r->dt);
    free(r->tmp), free(r->dl), free(r);
}
int __enzyme_cc_mpi_fwd_wait(H *req, St *status) {
    St st;
    ReqRec *r = table_take(*req);
    int rc = PMPI_Wait(req, &st);
    fwd_completed(r, &st);
    if (status) *status = st;
    return rc;
}
/* (the interposed MPI_Test and MPI_Testall below complete forward-mode requests) */
int __enzyme_cc_mpi_fwd_test(H *req, int *flag, St *status) {
    return MPI_Test(req, flag, status);
}
int __enzyme_cc_mpi_fwd_testall(int n, H *reqs, int *flag, St *statuses) {
    return MPI_Testall(n, reqs, flag, statuses);
}
int __enzyme_cc_mpi_fwd_waitany(int n, H *reqs, int *index, St *status) {
    return MPI_Waitany(n, reqs, index, status);
}
int __enzyme_cc_mpi_fwd_testany(int n, H *reqs, int *index, int *flag, St *status) {
    return MPI_Testany(n, reqs, index, flag, status);
}
int __enzyme_cc_mpi_fwd_waitsome(int n, H *reqs, int *count, int *indices, St *statuses) {
    return MPI_Waitsome(n, reqs, count, indices, statuses);
}
int __enzyme_cc_mpi_fwd_testsome(int n, H *reqs, int *count, int *indices, St *statuses) {
    return MPI_Testsome(n, reqs, count, indices, statuses);
}
int __enzyme_cc_mpi_fwd_waitall(int n, H *reqs, St *statuses) {
    ReqRec **rs = xcalloc((size_t)n, sizeof *rs);
    St *st = xcalloc((size_t)n, sizeof(St));
    for (int i = 0; i < n; i++) rs[i] = table_take(reqs[i]);
    int rc = PMPI_Waitall(n, reqs, st);
    for (int i = 0; i < n; i++) fwd_completed(rs[i], &st[i]);
    if (statuses) memcpy(statuses, st, (size_t)n * sizeof(St));
    free(rs), free(st);
    return rc;
}

/* ---- requests completed outside differentiated code ------------------------------------------
 * The program may complete a request that a forward-mode derivative started (its message holds
 * primal and tangent) with its own MPI_Wait, Waitall, Waitany, Waitsome or Test, Testall,
 * Testany, Testsome, outside differentiated code. MPI's profiling interface sends those calls
 * here first, so what they complete unpacks the message as the derivative's own wait would.
 * MPI_Request_free and MPI_Cancel of such a request stop with an error (a receive would never
 * be unpacked). Reverse-mode requests pass through: the reverse
 * sweep reports a request that differentiated code did not complete. The interposers are weak:
 * a program that defines its own (PMPI-style tools, miniAMR's tests) keeps them. */
static int forward_request(H key) {
    for (size_t i = 0; i < table_n; i++)
        if (table[i].key == key && key)
            return table[i].rec->what == FISEND || table[i].rec->what == FIRECV ? 1 : -1;
    return 0;
}
static int any_forward(int n, const H *reqs, int *reverse) {
    int fwd = 0;
    for (int i = 0; i < n; i++) {
        int f = forward_request(reqs[i]);
        fwd |= f > 0, *reverse |= f < 0;
    }
    return fwd;
}
static void refuse(const char *call) {
    char msg[300];
    snprintf(msg, sizeof msg, "%s on a request that a forward-mode derivative started (its message "
             "carries the tangent too): complete it with MPI_Wait or MPI_Waitall", call);
    fatal(msg);
}
#pragma GCC visibility push(default)    /* MPI's own functions, and the interposed ones */
int PMPI_Test(H *, int *, St *);
int PMPI_Testall(int, H *, int *, St *);
int PMPI_Testany(int, H *, int *, int *, St *);
int PMPI_Testsome(int, H *, int *, int *, St *);
int PMPI_Waitany(int, H *, int *, St *);
int PMPI_Waitsome(int, H *, int *, int *, St *);
int PMPI_Request_free(H *);
int PMPI_Cancel(H *);
__attribute__((weak)) int MPI_Wait(H *req, St *status) {
    return forward_request(*req) > 0 ? __enzyme_cc_mpi_fwd_wait(req, status)
                                     : PMPI_Wait(req, status);
}
__attribute__((weak)) int MPI_Waitall(int n, H *reqs, St *statuses) {
    int reverse = 0;
    if (!any_forward(n, reqs, &reverse))
        return PMPI_Waitall(n, reqs, statuses);
    if (reverse)
        fatal("MPI_Waitall on requests of a forward-mode and a reverse-mode derivative at once");
    return __enzyme_cc_mpi_fwd_waitall(n, reqs, statuses);
}
/* After a call that completed some of the requests keys[0..n): idx[j] (or j when idx is NULL)
 * completed with status st[j]. Forward-mode requests unpack their message; the handles were
 * saved before the call because MPI sets completed ones to MPI_REQUEST_NULL. */
static void fwd_after(const H *keys, const int *idx, int m, St *st) {
    for (int j = 0; j < m; j++) {
        H key = keys[idx ? idx[j] : j];
        if (forward_request(key) > 0) fwd_completed(table_take(key), &st[j]);
    }
}
__attribute__((weak)) int MPI_Testall(int n, H *reqs, int *flag, St *statuses) {
    int reverse = 0;
    if (!any_forward(n, reqs, &reverse)) return PMPI_Testall(n, reqs, flag, statuses);
    H *keys = saved(n, reqs);
    St *st = xcalloc(n > 0 ? (size_t)n : 1, sizeof(St));
    int rc = PMPI_Testall(n, reqs, flag, st);
    if (*flag) {
        fwd_after(keys, NULL, n, st);
        if (statuses) memcpy(statuses, st, (size_t)n * sizeof(St));
    }
    free(keys), free(st);
    return rc;
}
/* Testany and Waitany (flag NULL): one request completed, at *index */
static int any_done(int n, H *reqs, int *index, int *flag, St *status) {
    H *keys = saved(n, reqs);
    St st;
    int done = 1;
    int rc = flag ? PMPI_Testany(n, reqs, index, flag, &st) : PMPI_Waitany(n, reqs, index, &st);
    if (flag) done = *flag;
    if (done && *index >= 0 && *index < n) fwd_after(keys, index, 1, &st);
    if (done && status) *status = st;
    free(keys);
    return rc;
}
__attribute__((weak)) int MPI_Test(H *req, int *flag, St *status) {
    if (forward_request(*req) <= 0) return PMPI_Test(req, flag, status);
    return any_done(1, req, &(int){0}, flag, status);
}
__attribute__((weak)) int MPI_Testany(int n, H *reqs, int *index, int *flag, St *status) {
    int reverse = 0;
    if (!any_forward(n, reqs, &reverse)) return PMPI_Testany(n, reqs, index, flag, status);
    return any_done(n, reqs, index, flag, status);
}
__attribute__((weak)) int MPI_Waitany(int n, H *reqs, int *index, St *status) {
    int reverse = 0;
    if (!any_forward(n, reqs, &reverse)) return PMPI_Waitany(n, reqs, index, status);
    return any_done(n, reqs, index, NULL, status);
}
/* Testsome and Waitsome (wait != 0): *count requests completed, at indices[0..count) */
static int some_done(int n, H *reqs, int *count, int *indices, St *statuses, int wait) {
    H *keys = saved(n, reqs);
    St *st = xcalloc(n > 0 ? (size_t)n : 1, sizeof(St));
    int rc = wait ? PMPI_Waitsome(n, reqs, count, indices, st)
                  : PMPI_Testsome(n, reqs, count, indices, st);
    if (*count > 0) {               /* MPI_UNDEFINED (negative) when no request was active */
        fwd_after(keys, indices, *count, st);
        if (statuses) memcpy(statuses, st, (size_t)*count * sizeof(St));
    }
    free(keys), free(st);
    return rc;
}
__attribute__((weak)) int MPI_Testsome(int n, H *reqs, int *count, int *indices,
                                       St *statuses) {
    int reverse = 0;
    if (!any_forward(n, reqs, &reverse)) return PMPI_Testsome(n, reqs, count, indices, statuses);
    return some_done(n, reqs, count, indices, statuses, 0);
}
__attribute__((weak)) int MPI_Waitsome(int n, H *reqs, int *count, int *indices,
                                       St *statuses) {
    int reverse = 0;
    if (!any_forward(n, reqs, &reverse)) return PMPI_Waitsome(n, reqs, count, indices, statuses);
    return some_done(n, reqs, count, indices, statuses, 1);
}
__attribute__((weak)) int MPI_Request_free(H *req) {
    if (forward_request(*req) > 0) refuse("MPI_Request_free");
    return PMPI_Request_free(req);
}
__attribute__((weak)) int MPI_Cancel(H *req) {
    if (forward_request(*req) > 0) refuse("MPI_Cancel");
    return PMPI_Cancel(req);
}
#pragma GCC visibility pop
