/* enzyme-cc's Fortran MPI bindings (Open MPI, `include 'mpif.h'` and `use mpi`): linked into a
 * program's bitcode before AD in place of the library's `mpi_send_`, `mpi_isend_`,
     ... (rules/mpi.py
 * substitute_fortran renames the calls). Each converts Fortran's integer handles to C handles and
 * calls the C function, whose derivative rule AD then applies; the library's own bindings do the
 * same conversions, but have no bitcode.
 *
 * The wrappers are inlined before AD, so a datatype or op that the program names by its
 * PARAMETER (MPI_DOUBLE_PRECISION is 17 in every Open MPI) folds to the C handle the rules
 * recognise (&ompi_mpi_dblprec); one chosen at run time stays a run-time conversion, which the
 * rules refuse in differentiated code as they refuse a C datatype chosen at run time.
 * Fortran's sentinels (MPI_IN_PLACE, MPI_BOTTOM, MPI_STATUS(ES)_IGNORE) are common blocks of
 * libmpi, compared by address. */
#include <stdlib.h>
#include "mpi_abi.h"

typedef int F;                        /* MPI_Fint */
H MPI_Type_f2c(F);
H MPI_Op_f2c(F);
H MPI_Comm_f2c(F);
H MPI_Request_f2c(F);
F MPI_Request_c2f(H);
int MPI_Status_c2f(const St *, F *);

extern char ompi_mpi_real, ompi_mpi_real4, ompi_mpi_real8, ompi_mpi_dblprec, ompi_mpi_float,
    ompi_mpi_double, ompi_mpi_float_int, ompi_mpi_double_int, ompi_mpi_integer,
    ompi_mpi_integer4, ompi_mpi_integer8, ompi_mpi_logical, ompi_mpi_character, ompi_mpi_int,
    ompi_mpi_byte, ompi_mpi_packed, ompi_mpi_2real, ompi_mpi_2dblprec, ompi_mpi_2integer;
extern char ompi_mpi_op_max, ompi_mpi_op_min, ompi_mpi_op_sum, ompi_mpi_op_prod,
    ompi_mpi_op_maxloc, ompi_mpi_op_minloc;
extern char ompi_mpi_comm_world, ompi_mpi_comm_self;
extern int mpi_fortran_in_place_, mpi_fortran_bottom_, mpi_fortran_status_ignore_,
    mpi_fortran_statuses_ignore_;

#define W __attribute__((always_inline)) void

/* Open MPI's Fortran indices of its predefined datatypes (mpif-handles.h) */
static inline __attribute__((always_inline)) H dt(const F *t) {
  switch (*t) {
  case 13: return &ompi_mpi_real;
  case 14: return &ompi_mpi_real4;
  case 15: return &ompi_mpi_real8;
  case 17: return &ompi_mpi_dblprec;
  case 45: return &ompi_mpi_float;
  case 46: return &ompi_mpi_double;
  case 48: return &ompi_mpi_float_int;
  case 49: return &ompi_mpi_double_int;
  case 7: return &ompi_mpi_integer;
  case 10: return &ompi_mpi_integer4;
  case 11: return &ompi_mpi_integer8;
  case 6: return &ompi_mpi_logical;
  case 5: return &ompi_mpi_character;
  case 39: return &ompi_mpi_int;
  case 1: return &ompi_mpi_byte;
  case 2: return &ompi_mpi_packed;
  case 23: return &ompi_mpi_2real;
  case 24: return &ompi_mpi_2dblprec;
  case 25: return &ompi_mpi_2integer;
  default: return MPI_Type_f2c(*t);
  }
}
static inline __attribute__((always_inline)) H op(const F *o) {
  switch (*o) {
  case 1: return &ompi_mpi_op_max;
  case 2: return &ompi_mpi_op_min;
  case 3: return &ompi_mpi_op_sum;
  case 4: return &ompi_mpi_op_prod;
  case 11: return &ompi_mpi_op_maxloc;
  case 12: return &ompi_mpi_op_minloc;
  default: return MPI_Op_f2c(*o);
  }
}
static inline __attribute__((always_inline)) H comm(const F *c) {
  return *c == 0 ? &ompi_mpi_comm_world : *c == 1 ? &ompi_mpi_comm_self : MPI_Comm_f2c(*c);
}
/* a buffer argument: the sentinels become C's MPI_IN_PLACE ((void *)1) and MPI_BOTTOM (null) */
static inline __attribute__((always_inline)) void *buf(const void *b) {
  return b == &mpi_fortran_in_place_ ? (void *)1 : b == &mpi_fortran_bottom_ ? NULL : (void *)b;
}
static inline __attribute__((always_inline)) St *status(F *s, St *c) {
  return (void *)s == &mpi_fortran_status_ignore_ ? NULL : c;
}
static inline __attribute__((always_inline)) void status_out(F *s, const St *c) {
  if ((void *)s != &mpi_fortran_status_ignore_) MPI_Status_c2f(c, s);
}
static inline __attribute__((always_inline)) void done(F *ierr, int rc) {
  if (ierr) *ierr = rc;
}

#include "mpi_typed.h"

W __enzyme_cc_fmpi_send(const void *b, const F *n, const F *t, const F *dest, const F *tag,
                        const F *c, F *ierr) {
  H d = dt(t), d2 = d;
#define CALL(T) MPI_Send(buf(b), *n, T, *dest, *tag, comm(c))
  done(ierr, TYPED(d, d2, CALL, __enzyme_cc_fmpi_dyn_send(buf(b), *n, d, *dest, *tag, comm(c))));
#undef CALL
}
W __enzyme_cc_fmpi_ssend(const void *b, const F *n, const F *t, const F *dest, const F *tag,
                         const F *c, F *ierr) {
  H d = dt(t), d2 = d;
#define CALL(T) MPI_Ssend(buf(b), *n, T, *dest, *tag, comm(c))
  done(ierr, TYPED(d, d2, CALL, __enzyme_cc_fmpi_dyn_ssend(buf(b), *n, d, *dest, *tag, comm(c))));
#undef CALL
}
W __enzyme_cc_fmpi_rsend(const void *b, const F *n, const F *t, const F *dest, const F *tag,
                         const F *c, F *ierr) {
  H d = dt(t), d2 = d;
#define CALL(T) MPI_Rsend(buf(b), *n, T, *dest, *tag, comm(c))
  done(ierr, TYPED(d, d2, CALL, __enzyme_cc_fmpi_dyn_rsend(buf(b), *n, d, *dest, *tag, comm(c))));
#undef CALL
}
W __enzyme_cc_fmpi_recv(void *b, const F *n, const F *t, const F *src, const F *tag, const F *c,
                        F *s, F *ierr) {
  St st;
  H d = dt(t), d2 = d;
#define CALL(T) MPI_Recv(buf(b), *n, T, *src, *tag, comm(c), status(s, &st))
  done(ierr, TYPED(d, d2, CALL, __enzyme_cc_fmpi_dyn_recv(buf(b), *n, d, *src, *tag, comm(c),
      status(s, &st))));
#undef CALL
  status_out(s, &st);
}
W __enzyme_cc_fmpi_isend(const void *b, const F *n, const F *t, const F *dest, const F *tag,
                         const F *c, F *req, F *ierr) {
  H r;
  H d = dt(t), d2 = d;
#define CALL(T) MPI_Isend(buf(b), *n, T, *dest, *tag, comm(c), &r)
  done(ierr, TYPED(d, d2, CALL, __enzyme_cc_fmpi_dyn_isend(buf(b), *n, d, *dest, *tag, comm(c),
      &r)));
#undef CALL
  *req = MPI_Request_c2f(r);
}
W __enzyme_cc_fmpi_irecv(void *b, const F *n, const F *t, const F *src, const F *tag,
                         const F *c, F *req, F *ierr) {
  H r;
  H d = dt(t), d2 = d;
#define CALL(T) MPI_Irecv(buf(b), *n, T, *src, *tag, comm(c), &r)
  done(ierr, TYPED(d, d2, CALL, __enzyme_cc_fmpi_dyn_irecv(buf(b), *n, d, *src, *tag, comm(c),
      &r)));
#undef CALL
  *req = MPI_Request_c2f(r);
}
W __enzyme_cc_fmpi_wait(F *req, F *s, F *ierr) {
  H r = MPI_Request_f2c(*req);
  St st;
  done(ierr, MPI_Wait(&r, status(s, &st)));
  *req = MPI_Request_c2f(r);
  status_out(s, &st);
}
/* Waitall and Testall: Fortran's request array as C handles, with room for the statuses unless
 * MPI_STATUSES_IGNORE; back to Fortran, with the statuses where the call completed them */
typedef struct { int k; H *r; St *st; } Requests;
static inline __attribute__((always_inline)) Requests requests_in(const F *n, const F *reqs,
                                                                  F *s) {
  Requests q = {*n > 0 ? *n : 0, NULL, NULL};
  q.r = malloc(((size_t)q.k + 1) * sizeof(H));
  if ((void *)s != &mpi_fortran_statuses_ignore_) q.st = malloc(((size_t)q.k + 1) * sizeof(St));
  for (int i = 0; i < q.k; i++) q.r[i] = MPI_Request_f2c(reqs[i]);
  return q;
}
static inline __attribute__((always_inline)) void requests_out(Requests q, F *reqs, F *s,
                                                               int completed) {
  for (int i = 0; i < q.k; i++) {
    reqs[i] = MPI_Request_c2f(q.r[i]);
    if (completed && q.st) MPI_Status_c2f(&q.st[i], s + 6 * i);      /* MPI_STATUS_SIZE */
  }
  free(q.st), free(q.r);
}
W __enzyme_cc_fmpi_waitall(const F *n, F *reqs, F *s, F *ierr) {
  Requests q = requests_in(n, reqs, s);
  done(ierr, MPI_Waitall(q.k, q.r, q.st));
  requests_out(q, reqs, s, 1);
}
/* a Fortran LOGICAL flag: 1 for .true. (flang's and gfortran's) */
W __enzyme_cc_fmpi_test(F *req, F *flag, F *s, F *ierr) {
  H r = MPI_Request_f2c(*req);
  St st;
  int f = 0;
  done(ierr, MPI_Test(&r, &f, status(s, &st)));
  *flag = f != 0;
  *req = MPI_Request_c2f(r);
  if (f) status_out(s, &st);
}
W __enzyme_cc_fmpi_testall(const F *n, F *reqs, F *flag, F *s, F *ierr) {
  Requests q = requests_in(n, reqs, s);
  int f = 0;
  done(ierr, MPI_Testall(q.k, q.r, &f, q.st));
  *flag = f != 0;
  requests_out(q, reqs, s, f);
}
/* Waitany/Testany and Waitsome/Testsome: Fortran's indices count from 1 (MPI_UNDEFINED stays) */
static inline __attribute__((always_inline)) F f_index(int i) { return i >= 0 ? i + 1 : i; }
W __enzyme_cc_fmpi_waitany(const F *n, F *reqs, F *index, F *s, F *ierr) {
  Requests q = requests_in(n, reqs, &mpi_fortran_statuses_ignore_);
  St st;
  int i = 0;
  done(ierr, MPI_Waitany(q.k, q.r, &i, status(s, &st)));
  *index = f_index(i);
  requests_out(q, reqs, s, 0);
  if (i >= 0) status_out(s, &st);
}
W __enzyme_cc_fmpi_testany(const F *n, F *reqs, F *index, F *flag, F *s, F *ierr) {
  Requests q = requests_in(n, reqs, &mpi_fortran_statuses_ignore_);
  St st;
  int i = 0, f = 0;
  done(ierr, MPI_Testany(q.k, q.r, &i, &f, status(s, &st)));
  *index = f_index(i);
  *flag = f != 0;
  requests_out(q, reqs, s, 0);
  if (f && i >= 0) status_out(s, &st);
}
/* Waitsome (wait) and Testsome: *outcount requests completed, at indices[0..outcount) */
static inline __attribute__((always_inline)) void some(const F *n, F *reqs, F *outcount,
                                                       F *indices, F *s, F *ierr, int wait) {
  Requests q = requests_in(n, reqs, s);
  int count = 0, *idx = malloc(((size_t)q.k + 1) * sizeof(int));
  done(ierr, wait ? MPI_Waitsome(q.k, q.r, &count, idx, q.st)
                  : MPI_Testsome(q.k, q.r, &count, idx, q.st));
  *outcount = count;
  for (int i = 0; i < count; i++) {
    indices[i] = idx[i] + 1;
    if (q.st) MPI_Status_c2f(&q.st[i], s + 6 * i);                     /* MPI_STATUS_SIZE */
  }
  requests_out(q, reqs, s, 0);
  free(idx);
}
W __enzyme_cc_fmpi_waitsome(const F *n, F *reqs, F *outcount, F *indices, F *s, F *ierr) {
  some(n, reqs, outcount, indices, s, ierr, 1);
}
W __enzyme_cc_fmpi_testsome(const F *n, F *reqs, F *outcount, F *indices, F *s, F *ierr) {
  some(n, reqs, outcount, indices, s, ierr, 0);
}
W __enzyme_cc_fmpi_sendrecv(const void *sb, const F *sn, const F *st_, const F *dest,
                            const F *stag, void *rb, const F *rn, const F *rt, const F *src,
                            const F *rtag, const F *c, F *s, F *ierr) {
  St st;
  H d = dt(st_), d2 = dt(rt);
#define CALL(T) MPI_Sendrecv(buf(sb), *sn, T, *dest, *stag, buf(rb), *rn, T, *src, *rtag, \
    comm(c), status(s, &st))
  done(ierr, TYPED(d, d2, CALL, __enzyme_cc_fmpi_dyn_sendrecv(buf(sb), *sn, d, *dest, *stag,
      buf(rb), *rn, d2, *src, *rtag, comm(c), status(s, &st))));
#undef CALL
  status_out(s, &st);
}
W __enzyme_cc_fmpi_bcast(void *b, const F *n, const F *t, const F *root, const F *c, F *ierr) {
  H d = dt(t), d2 = d;
#define CALL(T) MPI_Bcast(buf(b), *n, T, *root, comm(c))
  done(ierr, TYPED(d, d2, CALL, __enzyme_cc_fmpi_dyn_bcast(buf(b), *n, d, *root, comm(c))));
#undef CALL
}
W __enzyme_cc_fmpi_reduce(const void *sb, void *rb, const F *n, const F *t, const F *o,
                          const F *root, const F *c, F *ierr) {
  H oo = op(o);
  done(ierr, BY_OP(oo, typed_reduce, other_reduce, buf(sb), buf(rb), *n, dt(t), *root, comm(c)));
}
W __enzyme_cc_fmpi_allreduce(const void *sb, void *rb, const F *n, const F *t, const F *o,
                             const F *c, F *ierr) {
  H oo = op(o);
  done(ierr, BY_OP(oo, typed_allreduce, other_allreduce, buf(sb), buf(rb), *n, dt(t), comm(c)));
}
W __enzyme_cc_fmpi_scan(const void *sb, void *rb, const F *n, const F *t, const F *o, const F *c,
                        F *ierr) {
  done(ierr, scan_by_op(buf(sb), buf(rb), *n, dt(t), op(o), comm(c)));
}
W __enzyme_cc_fmpi_exscan(const void *sb, void *rb, const F *n, const F *t, const F *o,
                          const F *c, F *ierr) {
  done(ierr, exscan_by_op(buf(sb), buf(rb), *n, dt(t), op(o), comm(c)));
}
W __enzyme_cc_fmpi_gather(const void *sb, const F *sn, const F *stp, void *rb, const F *rn,
                          const F *rt, const F *root, const F *c, F *ierr) {
  H d = dt(stp), d2 = dt(rt);
#define CALL(T) MPI_Gather(buf(sb), *sn, T, buf(rb), *rn, T, *root, comm(c))
  done(ierr, TYPED(d, d2, CALL, __enzyme_cc_fmpi_dyn_gather(buf(sb), *sn, d, buf(rb), *rn, d2,
      *root, comm(c))));
#undef CALL
}
W __enzyme_cc_fmpi_gatherv(const void *sb, const F *sn, const F *stp, void *rb, const F *rns,
                           const F *displs, const F *rt, const F *root, const F *c, F *ierr) {
  H d = dt(stp), d2 = dt(rt);
#define CALL(T) MPI_Gatherv(buf(sb), *sn, T, buf(rb), rns, displs, T, *root, comm(c))
  done(ierr, TYPED(d, d2, CALL, __enzyme_cc_fmpi_dyn_gatherv(buf(sb), *sn, d, buf(rb), rns,
      displs, d2, *root, comm(c))));
#undef CALL
}
W __enzyme_cc_fmpi_scatter(const void *sb, const F *sn, const F *stp, void *rb, const F *rn,
                           const F *rt, const F *root, const F *c, F *ierr) {
  H d = dt(stp), d2 = dt(rt);
#define CALL(T) MPI_Scatter(buf(sb), *sn, T, buf(rb), *rn, T, *root, comm(c))
  done(ierr, TYPED(d, d2, CALL, __enzyme_cc_fmpi_dyn_scatter(buf(sb), *sn, d, buf(rb), *rn, d2,
      *root, comm(c))));
#undef CALL
}
W __enzyme_cc_fmpi_scatterv(const void *sb, const F *sns, const F *displs, const F *stp,
                            void *rb, const F *rn, const F *rt, const F *root, const F *c,
                            F *ierr) {
  H d = dt(stp), d2 = dt(rt);
#define CALL(T) MPI_Scatterv(buf(sb), sns, displs, T, buf(rb), *rn, T, *root, comm(c))
  done(ierr, TYPED(d, d2, CALL, __enzyme_cc_fmpi_dyn_scatterv(buf(sb), sns, displs, d, buf(rb),
      *rn, d2, *root, comm(c))));
#undef CALL
}
W __enzyme_cc_fmpi_allgather(const void *sb, const F *sn, const F *stp, void *rb, const F *rn,
                             const F *rt, const F *c, F *ierr) {
  H d = dt(stp), d2 = dt(rt);
#define CALL(T) MPI_Allgather(buf(sb), *sn, T, buf(rb), *rn, T, comm(c))
  done(ierr, TYPED(d, d2, CALL, __enzyme_cc_fmpi_dyn_allgather(buf(sb), *sn, d, buf(rb), *rn, d2,
      comm(c))));
#undef CALL
}
W __enzyme_cc_fmpi_allgatherv(const void *sb, const F *sn, const F *stp, void *rb,
                              const F *rns, const F *displs, const F *rt, const F *c, F *ierr) {
  H d = dt(stp), d2 = dt(rt);
#define CALL(T) MPI_Allgatherv(buf(sb), *sn, T, buf(rb), rns, displs, T, comm(c))
  done(ierr, TYPED(d, d2, CALL, __enzyme_cc_fmpi_dyn_allgatherv(buf(sb), *sn, d, buf(rb), rns,
      displs, d2, comm(c))));
#undef CALL
}
W __enzyme_cc_fmpi_alltoall(const void *sb, const F *sn, const F *stp, void *rb, const F *rn,
                            const F *rt, const F *c, F *ierr) {
  H d = dt(stp), d2 = dt(rt);
#define CALL(T) MPI_Alltoall(buf(sb), *sn, T, buf(rb), *rn, T, comm(c))
  done(ierr, TYPED(d, d2, CALL, __enzyme_cc_fmpi_dyn_alltoall(buf(sb), *sn, d, buf(rb), *rn, d2,
      comm(c))));
#undef CALL
}
W __enzyme_cc_fmpi_alltoallv(const void *sb, const F *sns, const F *sd, const F *stp, void *rb,
                             const F *rns, const F *rd, const F *rt, const F *c, F *ierr) {
  H d = dt(stp), d2 = dt(rt);
#define CALL(T) MPI_Alltoallv(buf(sb), sns, sd, T, buf(rb), rns, rd, T, comm(c))
  done(ierr, TYPED(d, d2, CALL, __enzyme_cc_fmpi_dyn_alltoallv(buf(sb), sns, sd, d, buf(rb), rns,
      rd, d2, comm(c))));
#undef CALL
}
W __enzyme_cc_fmpi_barrier(const F *c, F *ierr) {
  done(ierr, MPI_Barrier(comm(c)));
}
