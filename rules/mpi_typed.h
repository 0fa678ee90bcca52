#ifndef ENZYME_CC_MPI_TYPED_H
#define ENZYME_CC_MPI_TYPED_H
/* A call whose datatype is held in a variable, as calls with a constant datatype: shared by
 * the Fortran bindings (rules/mpi_fortran.c) and the C calls given their datatype at run time
 * (rules/mpi_c_typed.c). Include after mpi_abi.h. */

extern char ompi_mpi_real, ompi_mpi_real4, ompi_mpi_real8, ompi_mpi_dblprec, ompi_mpi_float,
    ompi_mpi_double;
extern char ompi_mpi_op_sum, ompi_mpi_op_max, ompi_mpi_op_min, ompi_mpi_op_maxloc,
    ompi_mpi_op_minloc;

/* the calls whose datatype is none of the float types of TYPED (integer data; a float type held
 * in a variable that is none of those): defined by rules/mpi_dynamic.c after AD, which checks
 * their datatype at run time to be integer data where they are differentiated (rules/mpi.py) */
int __enzyme_cc_fmpi_dyn_send(const void *a0, int a1, H a2, int a3, int a4, H a5);
int __enzyme_cc_fmpi_dyn_ssend(const void *a0, int a1, H a2, int a3, int a4, H a5);
int __enzyme_cc_fmpi_dyn_rsend(const void *a0, int a1, H a2, int a3, int a4, H a5);
int __enzyme_cc_fmpi_dyn_recv(void *a0, int a1, H a2, int a3, int a4, H a5, St *a6);
int __enzyme_cc_fmpi_dyn_isend(const void *a0, int a1, H a2, int a3, int a4, H a5, H *a6);
int __enzyme_cc_fmpi_dyn_irecv(void *a0, int a1, H a2, int a3, int a4, H a5, H *a6);
int __enzyme_cc_fmpi_dyn_sendrecv(const void *a0, int a1, H a2, int a3, int a4, void *a5,
    int a6, H a7, int a8, int a9, H a10, St *a11);
int __enzyme_cc_fmpi_dyn_bcast(void *a0, int a1, H a2, int a3, H a4);
int __enzyme_cc_fmpi_dyn_reduce(const void *a0, void *a1, int a2, H a3, H a4, int a5, H a6);
int __enzyme_cc_fmpi_dyn_allreduce(const void *a0, void *a1, int a2, H a3, H a4, H a5);
int __enzyme_cc_fmpi_dyn_scan(const void *a0, void *a1, int a2, H a3, H a4, H a5);
int __enzyme_cc_fmpi_dyn_exscan(const void *a0, void *a1, int a2, H a3, H a4, H a5);
int __enzyme_cc_fmpi_dyn_gather(const void *a0, int a1, H a2, void *a3, int a4, H a5, int a6,
    H a7);
int __enzyme_cc_fmpi_dyn_gatherv(const void *a0, int a1, H a2, void *a3, const int *a4,
    const int *a5, H a6, int a7, H a8);
int __enzyme_cc_fmpi_dyn_scatter(const void *a0, int a1, H a2, void *a3, int a4, H a5, int a6,
    H a7);
int __enzyme_cc_fmpi_dyn_scatterv(const void *a0, const int *a1, const int *a2, H a3,
    void *a4, int a5, H a6, int a7, H a8);
int __enzyme_cc_fmpi_dyn_allgather(const void *a0, int a1, H a2, void *a3, int a4, H a5,
    H a6);
int __enzyme_cc_fmpi_dyn_allgatherv(const void *a0, int a1, H a2, void *a3, const int *a4,
    const int *a5, H a6, H a7);
int __enzyme_cc_fmpi_dyn_alltoall(const void *a0, int a1, H a2, void *a3, int a4, H a5, H a6);
int __enzyme_cc_fmpi_dyn_alltoallv(const void *a0, const int *a1, const int *a2, H a3,
    void *a4, const int *a5, const int *a6, H a7, H a8);

/* the call with its datatype as a constant: one branch is left where the program names the
 * datatype, all of them where it holds it in a variable (NPB's dp_type) */
#define TYPED(d, d2, CALL, OTHER)                                                               \
  ((d) == &ompi_mpi_dblprec && (d2) == (d)   ? CALL(&ompi_mpi_dblprec)                          \
   : (d) == &ompi_mpi_real8 && (d2) == (d)  ? CALL(&ompi_mpi_real8)                            \
   : (d) == &ompi_mpi_double && (d2) == (d) ? CALL(&ompi_mpi_double)                           \
   : (d) == &ompi_mpi_real && (d2) == (d)   ? CALL(&ompi_mpi_real)                             \
   : (d) == &ompi_mpi_real4 && (d2) == (d)  ? CALL(&ompi_mpi_real4)                            \
   : (d) == &ompi_mpi_float && (d2) == (d)  ? CALL(&ompi_mpi_float)                            \
                                            : OTHER)


/* a reduction held in a variable (or chosen by a branch), as calls with a constant op: F(args...,
 * op) for each of MPI_SUM, MPI_MAX and MPI_MIN; any other goes to G (rules/mpi_dynamic.c's call,
 * checked at run time to move integer data only where it is differentiated) */
#define BY_OP(o, F, G, ...)                                                                     \
  ((o) == &ompi_mpi_op_sum   ? F(__VA_ARGS__, &ompi_mpi_op_sum)                                 \
   : (o) == &ompi_mpi_op_max ? F(__VA_ARGS__, &ompi_mpi_op_max)                                 \
   : (o) == &ompi_mpi_op_min ? F(__VA_ARGS__, &ompi_mpi_op_min)                                 \
                             : G(__VA_ARGS__, (o)))

/* MPI_Reduce and MPI_Allreduce with both dispatches */
static inline __attribute__((always_inline)) int typed_reduce(const void *sb, void *rb, int n,
                                                              H t, int root, H c, H o) {
#define CALL(T) MPI_Reduce(sb, rb, n, T, o, root, c)
  return TYPED(t, t, CALL, __enzyme_cc_fmpi_dyn_reduce(sb, rb, n, t, o, root, c));
#undef CALL
}
static inline __attribute__((always_inline)) int typed_allreduce(const void *sb, void *rb, int n,
                                                                 H t, H c, H o) {
#define CALL(T) MPI_Allreduce(sb, rb, n, T, o, c)
  return TYPED(t, t, CALL, __enzyme_cc_fmpi_dyn_allreduce(sb, rb, n, t, o, c));
#undef CALL
}
static inline __attribute__((always_inline)) int other_reduce(const void *sb, void *rb, int n,
                                                              H t, int root, H c, H o) {
  return __enzyme_cc_fmpi_dyn_reduce(sb, rb, n, t, o, root, c);
}
static inline __attribute__((always_inline)) int other_allreduce(const void *sb, void *rb, int n,
                                                                 H t, H c, H o) {
  return __enzyme_cc_fmpi_dyn_allreduce(sb, rb, n, t, o, c);
}
/* MPI_Scan and MPI_Exscan: only a prefix sum has a derivative, so only MPI_SUM is dispatched
 * over the float types (any other op: integer data, checked at run time) */
static inline __attribute__((always_inline)) int scan_by_op(const void *sb, void *rb, int n, H t,
                                                            H o, H c) {
#define CALL(T) MPI_Scan(sb, rb, n, T, &ompi_mpi_op_sum, c)
  return o == &ompi_mpi_op_sum ? TYPED(t, t, CALL, __enzyme_cc_fmpi_dyn_scan(sb, rb, n, t, o, c))
                               : __enzyme_cc_fmpi_dyn_scan(sb, rb, n, t, o, c);
#undef CALL
}
static inline __attribute__((always_inline)) int exscan_by_op(const void *sb, void *rb, int n,
                                                              H t, H o, H c) {
#define CALL(T) MPI_Exscan(sb, rb, n, T, &ompi_mpi_op_sum, c)
  return o == &ompi_mpi_op_sum ? TYPED(t, t, CALL, __enzyme_cc_fmpi_dyn_exscan(sb, rb, n, t, o, c))
                               : __enzyme_cc_fmpi_dyn_exscan(sb, rb, n, t, o, c);
#undef CALL
}
#endif
