/* C MPI calls whose datatype or reduction the program holds in a variable (a struct field, a global set at
 * start-up): rules/mpi.py substitute_c_datatypes renames such a call to the wrapper here before
 * AD, and the wrapper, inlined, calls the same function with the datatype as a constant in one
 * branch per float type (TYPED), so the derivative rules apply in each; any other datatype goes
 * to rules/mpi_dynamic.c, checked at run time to be integer data where it is differentiated.
 * A reduction held in a variable is dispatched likewise (BY_OP). */
#include "mpi_abi.h"
#include "mpi_typed.h"

#define C __attribute__((always_inline)) int

C __enzyme_cc_cmpi_send(const void *b, int n, H t, int dest, int tag, H c) {
#define CALL(T) MPI_Send(b, n, T, dest, tag, c)
  return TYPED(t, t, CALL, __enzyme_cc_fmpi_dyn_send(b, n, t, dest, tag, c));
#undef CALL
}
C __enzyme_cc_cmpi_ssend(const void *b, int n, H t, int dest, int tag, H c) {
#define CALL(T) MPI_Ssend(b, n, T, dest, tag, c)
  return TYPED(t, t, CALL, __enzyme_cc_fmpi_dyn_ssend(b, n, t, dest, tag, c));
#undef CALL
}
C __enzyme_cc_cmpi_rsend(const void *b, int n, H t, int dest, int tag, H c) {
#define CALL(T) MPI_Rsend(b, n, T, dest, tag, c)
  return TYPED(t, t, CALL, __enzyme_cc_fmpi_dyn_rsend(b, n, t, dest, tag, c));
#undef CALL
}
C __enzyme_cc_cmpi_recv(void *b, int n, H t, int src, int tag, H c, St *s) {
#define CALL(T) MPI_Recv(b, n, T, src, tag, c, s)
  return TYPED(t, t, CALL, __enzyme_cc_fmpi_dyn_recv(b, n, t, src, tag, c, s));
#undef CALL
}
C __enzyme_cc_cmpi_isend(const void *b, int n, H t, int dest, int tag, H c, H *r) {
#define CALL(T) MPI_Isend(b, n, T, dest, tag, c, r)
  return TYPED(t, t, CALL, __enzyme_cc_fmpi_dyn_isend(b, n, t, dest, tag, c, r));
#undef CALL
}
C __enzyme_cc_cmpi_irecv(void *b, int n, H t, int src, int tag, H c, H *r) {
#define CALL(T) MPI_Irecv(b, n, T, src, tag, c, r)
  return TYPED(t, t, CALL, __enzyme_cc_fmpi_dyn_irecv(b, n, t, src, tag, c, r));
#undef CALL
}
C __enzyme_cc_cmpi_sendrecv(const void *sb, int sn, H st, int dest, int stag, void *rb, int rn,
                            H rt, int src, int rtag, H c, St *s) {
#define CALL(T) MPI_Sendrecv(sb, sn, T, dest, stag, rb, rn, T, src, rtag, c, s)
  return TYPED(st, rt, CALL, __enzyme_cc_fmpi_dyn_sendrecv(sb, sn, st, dest, stag, rb, rn, rt,
                                                            src, rtag, c, s));
#undef CALL
}
C __enzyme_cc_cmpi_bcast(void *b, int n, H t, int root, H c) {
#define CALL(T) MPI_Bcast(b, n, T, root, c)
  return TYPED(t, t, CALL, __enzyme_cc_fmpi_dyn_bcast(b, n, t, root, c));
#undef CALL
}
C __enzyme_cc_cmpi_reduce(const void *sb, void *rb, int n, H t, H o, int root, H c) {
  return BY_OP(o, typed_reduce, other_reduce, sb, rb, n, t, root, c);
}
C __enzyme_cc_cmpi_allreduce(const void *sb, void *rb, int n, H t, H o, H c) {
  return BY_OP(o, typed_allreduce, other_allreduce, sb, rb, n, t, c);
}
C __enzyme_cc_cmpi_scan(const void *sb, void *rb, int n, H t, H o, H c) {
  return scan_by_op(sb, rb, n, t, o, c);
}
C __enzyme_cc_cmpi_exscan(const void *sb, void *rb, int n, H t, H o, H c) {
  return exscan_by_op(sb, rb, n, t, o, c);
}
C __enzyme_cc_cmpi_gather(const void *sb, int sn, H st, void *rb, int rn, H rt, int root, H c) {
#define CALL(T) MPI_Gather(sb, sn, T, rb, rn, T, root, c)
  return TYPED(st, rt, CALL, __enzyme_cc_fmpi_dyn_gather(sb, sn, st, rb, rn, rt, root, c));
#undef CALL
}
C __enzyme_cc_cmpi_gatherv(const void *sb, int sn, H st, void *rb, const int *rns,
                           const int *displs, H rt, int root, H c) {
#define CALL(T) MPI_Gatherv(sb, sn, T, rb, rns, displs, T, root, c)
  return TYPED(st, rt, CALL, __enzyme_cc_fmpi_dyn_gatherv(sb, sn, st, rb, rns, displs, rt, root,
                                                           c));
#undef CALL
}
C __enzyme_cc_cmpi_scatter(const void *sb, int sn, H st, void *rb, int rn, H rt, int root, H c) {
#define CALL(T) MPI_Scatter(sb, sn, T, rb, rn, T, root, c)
  return TYPED(st, rt, CALL, __enzyme_cc_fmpi_dyn_scatter(sb, sn, st, rb, rn, rt, root, c));
#undef CALL
}
C __enzyme_cc_cmpi_scatterv(const void *sb, const int *sns, const int *displs, H st, void *rb,
                            int rn, H rt, int root, H c) {
#define CALL(T) MPI_Scatterv(sb, sns, displs, T, rb, rn, T, root, c)
  return TYPED(st, rt, CALL, __enzyme_cc_fmpi_dyn_scatterv(sb, sns, displs, st, rb, rn, rt, root,
                                                            c));
#undef CALL
}
C __enzyme_cc_cmpi_allgather(const void *sb, int sn, H st, void *rb, int rn, H rt, H c) {
#define CALL(T) MPI_Allgather(sb, sn, T, rb, rn, T, c)
  return TYPED(st, rt, CALL, __enzyme_cc_fmpi_dyn_allgather(sb, sn, st, rb, rn, rt, c));
#undef CALL
}
C __enzyme_cc_cmpi_allgatherv(const void *sb, int sn, H st, void *rb, const int *rns,
                              const int *displs, H rt, H c) {
#define CALL(T) MPI_Allgatherv(sb, sn, T, rb, rns, displs, T, c)
  return TYPED(st, rt, CALL, __enzyme_cc_fmpi_dyn_allgatherv(sb, sn, st, rb, rns, displs, rt,
                                                              c));
#undef CALL
}
C __enzyme_cc_cmpi_alltoall(const void *sb, int sn, H st, void *rb, int rn, H rt, H c) {
#define CALL(T) MPI_Alltoall(sb, sn, T, rb, rn, T, c)
  return TYPED(st, rt, CALL, __enzyme_cc_fmpi_dyn_alltoall(sb, sn, st, rb, rn, rt, c));
#undef CALL
}
C __enzyme_cc_cmpi_alltoallv(const void *sb, const int *sns, const int *sd, H st, void *rb,
                             const int *rns, const int *rd, H rt, H c) {
#define CALL(T) MPI_Alltoallv(sb, sns, sd, T, rb, rns, rd, T, c)
  return TYPED(st, rt, CALL, __enzyme_cc_fmpi_dyn_alltoallv(sb, sns, sd, st, rb, rns, rd, rt,
                                                             c));
#undef CALL
}
