#ifndef ENZYME_CC_MPI_RUNTIME_H
#define ENZYME_CC_MPI_RUNTIME_H
/* enzyme-cc's MPI runtime (rules/mpi.py), shared part: MPI declarations and element helpers,
 * included by mpi_runtime.c (point to point, nonblocking) and mpi_collectives.c.
 *
 * The runtime: the derivatives of MPI calls, written as MPI calls.
 * Compiled to bitcode at link time and linked into the derivative when it calls one of these.
 *
 *   __enzyme_cc_mpi_aug_X(primal args, shadows, kinds) -> {record, rc}: reverse mode's forward
 *       sweep: the primal call plus what its reverse needs that the arguments do not say (the
 *       actual source/tag/count of a receive, the winner of a max/min, copies of count arrays,
 *       the pending operation of a request);
 *   __enzyme_cc_mpi_rev_X(record, primal args, shadows, kinds): the adjoint communication;
 *   __enzyme_cc_mpi_fwd_X(primal args, shadows, kinds) -> rc: forward mode, primal and tangent;
 *   __enzyme_cc_mpi_fwdv_X(primal args, shadow arrays, kinds, w) -> rc: vector forward mode
 *       (enzyme_width w): each shadow argument is an array of the w lanes' shadows.
 *
 * A null shadow is zero data: every rank takes part in every adjoint or tangent communication
 * whatever its own activity, so the communication pattern matches across ranks. Forward mode
 * sends primal and tangents of point-to-point messages in one message of (1 + w) times the
 * count (matching, wildcards and ordering stay the primal's), so both ends must be built with
 * the same width.
 *
 * Open MPI's ABI (handles are pointers, MPI_Status as below): the rules only call this for
 * datatypes and ops they recognised as Open MPI's predefined ones. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_abi.h"

typedef struct { void *rec; int rc; } Aug;

int PMPI_Wait(H *, St *);          /* the runtime's own waits (mpi_runtime.c interposes) */
int PMPI_Waitall(int, H *, St *);
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
enum { K_FLOAT, K_DOUBLE, K_FLOAT_INT, K_DOUBLE_INT, K_BYTES };
enum { OP_SUM, OP_MAX, OP_MIN, OP_MAXLOC, OP_MINLOC };

static inline size_t esz(int k) {
    return k == K_FLOAT ? 4 : k == K_DOUBLE ? 8 : k == K_FLOAT_INT ? 8 : k == K_BYTES ? 1 : 16;
}
static inline int isdbl(int k) { return k == K_DOUBLE || k == K_DOUBLE_INT; }
static inline H valtype(int k) { return isdbl(k) ? (H)&ompi_mpi_double : (H)&ompi_mpi_float; }

static inline void fatal(const char *what) {
    fprintf(stderr, "enzyme-cc: error: %s\n", what);
    MPI_Abort((H)&ompi_mpi_comm_world, 1);
    abort();
}

static inline void *xcalloc(size_t n, size_t s) {
    void *p = calloc(n ? n : 1, s ? s : 1);
    if (!p) fatal("out of memory in an MPI derivative");
    return p;
}

/* the value (float part) of element i */
static inline double get(const void *b, int k, size_t i) {
    const char *p = (const char *)b + i * esz(k);
    return isdbl(k) ? *(const double *)p : *(const float *)p;
}
static inline void put(void *b, int k, size_t i, double v) {
    char *p = (char *)b + i * esz(k);
    if (isdbl(k)) *(double *)p = v; else *(float *)p = (float)v;
}
static inline int all_zero(const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i]) return 0;
    return 1;
}
/* d[i] += s[i] (values only), d null: dropped. Bytes (MPI_BYTE or a character type: records of
 * any layout) are added only where one side is all zero, which is then the sum whatever the
 * bytes hold. */
static inline void add(void *d, const void *s, int k, size_t n) {
    if (!d) return;
    if (k == K_BYTES) {
        if (all_zero(s, n)) return;
        if (!all_zero(d, n))
            fatal("the adjoint of a byte message (MPI_BYTE, or a character type) meets adjoint "
                  "data already in the shadow of its send buffer (the buffer was read after the "
                  "send, or holds pointers); hint: send float data as MPI_DOUBLE or MPI_FLOAT, "
                  "or pack each message into a buffer nothing reads after the send");
        memcpy(d, s, n);
        return;
    }
    for (size_t i = 0; i < n; i++) put(d, k, i, get(d, k, i) + get(s, k, i));
}
static inline void zero(void *d, int k, size_t n) {
    if (!d) return;
    if (k == K_BYTES) { memset(d, 0, n); return; }
    for (size_t i = 0; i < n; i++) put(d, k, i, 0.0);
}
/* a fresh copy of n elements of d (zeros when d is null) */
static inline void *copy(const void *d, int k, size_t n) {
    void *t = xcalloc(n, esz(k));
    if (d) memcpy(t, d, n * esz(k));
    return t;
}
static inline int rank_of(H comm) { int r; MPI_Comm_rank(comm, &r); return r; }
static inline int size_of(H comm) { int s; MPI_Comm_size(comm, &s); return s; }
static inline int *icopy(const int *a, int n) {
    int *t = xcalloc((size_t)n, sizeof(int));
    memcpy(t, a, (size_t)n * sizeof(int));
    return t;
}
/* elements spanned by counts/displs */
static inline size_t span(const int *counts, const int *displs, int n) {
    size_t m = 0;
    for (int i = 0; i < n; i++)
        if (counts[i] > 0 && (size_t)(displs[i] + counts[i]) > m) m = (size_t)(displs[i] + counts[i]);
    return m;
}

#endif
