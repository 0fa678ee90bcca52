#ifndef ENZYME_CC_MPI_ABI_H
#define ENZYME_CC_MPI_ABI_H
/* Open MPI's ABI as enzyme-cc's MPI code calls it (rules/mpi_runtime.h, rules/mpi_fortran.c):
 * handles are pointers to the library's objects, MPI_Status as below; the communicating calls
 * that have derivative rules (rules/mpi.py FUNCS). */
#include <stddef.h>

typedef void *H;                 /* MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request */
typedef struct { int src, tag, error, cancelled; size_t ucount; } St;   /* MPI_Status */

int MPI_Send(const void *, int, H, int, int, H);
int MPI_Recv(void *, int, H, int, int, H, St *);
int MPI_Isend(const void *, int, H, int, int, H, H *);
int MPI_Irecv(void *, int, H, int, int, H, H *);
int MPI_Wait(H *, St *);
int MPI_Waitall(int, H *, St *);
int MPI_Test(H *, int *, St *);
int MPI_Testall(int, H *, int *, St *);
int MPI_Waitany(int, H *, int *, St *);
int MPI_Testany(int, H *, int *, int *, St *);
int MPI_Waitsome(int, H *, int *, int *, St *);
int MPI_Testsome(int, H *, int *, int *, St *);
int MPI_Sendrecv(const void *, int, H, int, int, void *, int, H, int, int, H, St *);
int MPI_Bcast(void *, int, H, int, H);
int MPI_Reduce(const void *, void *, int, H, H, int, H);
int MPI_Allreduce(const void *, void *, int, H, H, H);
int MPI_Scan(const void *, void *, int, H, H, H);
int MPI_Exscan(const void *, void *, int, H, H, H);
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
int MPI_Ssend(const void *, int, H, int, int, H);
int MPI_Rsend(const void *, int, H, int, int, H);
#endif
