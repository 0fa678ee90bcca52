/* enzyme-cc's Fortran MPI bindings (rules/mpi_fortran.c) hand a call whose datatype is not one
 * of the float types they name to these: the C call as it is. They stay declarations until AD
 * is done (rules/mpi.py treats them as MPI calls whose datatype is known only at run time:
 * integer data, checked by __enzyme_cc_mpi_integer_data where they are differentiated), then
 * are linked in with the MPI runtime. */
/* (declared before the runtime's header, which makes what follows it hidden) */
extern char ompi_mpi_integer, ompi_mpi_integer1, ompi_mpi_integer2, ompi_mpi_integer4,
    ompi_mpi_integer8, ompi_mpi_logical, ompi_mpi_character, ompi_mpi_long, ompi_mpi_short,
    ompi_mpi_unsigned, ompi_mpi_unsigned_long, ompi_mpi_long_long_int, ompi_mpi_char,
    ompi_mpi_unsigned_char, ompi_mpi_signed_char, ompi_mpi_int8_t, ompi_mpi_int16_t,
    ompi_mpi_int32_t, ompi_mpi_int64_t, ompi_mpi_2integer, ompi_mpi_2int;
#include "mpi_runtime.h"

#define DYN __attribute__((noinline))
DYN int __enzyme_cc_fmpi_dyn_send(const void *a0, int a1, H a2, int a3, int a4, H a5) {
  return MPI_Send(a0, a1, a2, a3, a4, a5);
}
DYN int __enzyme_cc_fmpi_dyn_ssend(const void *a0, int a1, H a2, int a3, int a4, H a5) {
  return MPI_Ssend(a0, a1, a2, a3, a4, a5);
}
DYN int __enzyme_cc_fmpi_dyn_rsend(const void *a0, int a1, H a2, int a3, int a4, H a5) {
  return MPI_Rsend(a0, a1, a2, a3, a4, a5);
}
DYN int __enzyme_cc_fmpi_dyn_recv(void *a0, int a1, H a2, int a3, int a4, H a5, St *a6) {
  return MPI_Recv(a0, a1, a2, a3, a4, a5, a6);
}
DYN int __enzyme_cc_fmpi_dyn_isend(const void *a0, int a1, H a2, int a3, int a4, H a5, H *a6) {
  return MPI_Isend(a0, a1, a2, a3, a4, a5, a6);
}
DYN int __enzyme_cc_fmpi_dyn_irecv(void *a0, int a1, H a2, int a3, int a4, H a5, H *a6) {
  return MPI_Irecv(a0, a1, a2, a3, a4, a5, a6);
}
DYN int __enzyme_cc_fmpi_dyn_sendrecv(const void *a0, int a1, H a2, int a3, int a4, void *a5,
    int a6, H a7, int a8, int a9, H a10, St *a11) {
  return MPI_Sendrecv(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11);
}
DYN int __enzyme_cc_fmpi_dyn_bcast(void *a0, int a1, H a2, int a3, H a4) {
  return MPI_Bcast(a0, a1, a2, a3, a4);
}
DYN int __enzyme_cc_fmpi_dyn_reduce(const void *a0, void *a1, int a2, H a3, H a4, int a5, H a6) {
  return MPI_Reduce(a0, a1, a2, a3, a4, a5, a6);
}
DYN int __enzyme_cc_fmpi_dyn_allreduce(const void *a0, void *a1, int a2, H a3, H a4, H a5) {
  return MPI_Allreduce(a0, a1, a2, a3, a4, a5);
}
DYN int __enzyme_cc_fmpi_dyn_scan(const void *a0, void *a1, int a2, H a3, H a4, H a5) {
  return MPI_Scan(a0, a1, a2, a3, a4, a5);
}
DYN int __enzyme_cc_fmpi_dyn_exscan(const void *a0, void *a1, int a2, H a3, H a4, H a5) {
  return MPI_Exscan(a0, a1, a2, a3, a4, a5);
}
DYN int __enzyme_cc_fmpi_dyn_gather(const void *a0, int a1, H a2, void *a3, int a4, H a5, int a6,
    H a7) {
  return MPI_Gather(a0, a1, a2, a3, a4, a5, a6, a7);
}
DYN int __enzyme_cc_fmpi_dyn_gatherv(const void *a0, int a1, H a2, void *a3, const int *a4,
    const int *a5, H a6, int a7, H a8) {
  return MPI_Gatherv(a0, a1, a2, a3, a4, a5, a6, a7, a8);
}
DYN int __enzyme_cc_fmpi_dyn_scatter(const void *a0, int a1, H a2, void *a3, int a4, H a5, int a6,
    H a7) {
  return MPI_Scatter(a0, a1, a2, a3, a4, a5, a6, a7);
}
DYN int __enzyme_cc_fmpi_dyn_scatterv(const void *a0, const int *a1, const int *a2, H a3,
    void *a4, int a5, H a6, int a7, H a8) {
  return MPI_Scatterv(a0, a1, a2, a3, a4, a5, a6, a7, a8);
}
DYN int __enzyme_cc_fmpi_dyn_allgather(const void *a0, int a1, H a2, void *a3, int a4, H a5,
    H a6) {
  return MPI_Allgather(a0, a1, a2, a3, a4, a5, a6);
}
DYN int __enzyme_cc_fmpi_dyn_allgatherv(const void *a0, int a1, H a2, void *a3, const int *a4,
    const int *a5, H a6, H a7) {
  return MPI_Allgatherv(a0, a1, a2, a3, a4, a5, a6, a7);
}
DYN int __enzyme_cc_fmpi_dyn_alltoall(const void *a0, int a1, H a2, void *a3, int a4, H a5, H a6) {
  return MPI_Alltoall(a0, a1, a2, a3, a4, a5, a6);
}
DYN int __enzyme_cc_fmpi_dyn_alltoallv(const void *a0, const int *a1, const int *a2, H a3,
    void *a4, const int *a5, const int *a6, H a7, H a8) {
  return MPI_Alltoallv(a0, a1, a2, a3, a4, a5, a6, a7, a8);
}



/* in a derivative: the datatype given at run time to such a call moves no float data */
void __enzyme_cc_mpi_integer_data(H dt, const char *call) {
    static const void *integer[] = {
        &ompi_mpi_int, &ompi_mpi_integer, &ompi_mpi_integer1, &ompi_mpi_integer2,
        &ompi_mpi_integer4, &ompi_mpi_integer8, &ompi_mpi_logical, &ompi_mpi_character,
        &ompi_mpi_long, &ompi_mpi_short, &ompi_mpi_unsigned, &ompi_mpi_unsigned_long,
        &ompi_mpi_long_long_int, &ompi_mpi_char, &ompi_mpi_unsigned_char, &ompi_mpi_signed_char,
        &ompi_mpi_int8_t, &ompi_mpi_int16_t, &ompi_mpi_int32_t, &ompi_mpi_int64_t,
        &ompi_mpi_2integer, &ompi_mpi_2int};
    for (size_t i = 0; i < sizeof integer / sizeof *integer; i++)
        if (dt == integer[i]) return;
    char msg[420];
    snprintf(msg, sizeof msg, "%s in differentiated code was given a datatype held in a "
             "variable that is neither integer data nor MPI_DOUBLE_PRECISION, MPI_REAL, "
             "MPI_REAL4, MPI_REAL8, MPI_DOUBLE or MPI_FLOAT (a derived or complex type has no "
             "derivative rule), or float data with a reduction held in a variable other than "
             "MPI_SUM, MPI_MAX or MPI_MIN; name the datatype and reduction in the call", call);
    fatal(msg);
}
