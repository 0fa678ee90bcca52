/* Forward mode: the differentiated function starts a ring exchange (MPI_Irecv, MPI_Isend) and
 * returns; the caller completes the requests with its own MPI_Wait / MPI_Waitall, outside
 * differentiated code. The received values and their tangents must arrive all the same.
 * With argument "test" the caller uses MPI_Test instead, which must stop with a clear error. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

double __enzyme_fwddiff(void *, ...);
int enzyme_dup, enzyme_const;

/* y <- the left neighbour's sin(x); requests left pending in req[0..1] */
void start(const double *x, double *y, double *tmp, MPI_Request *req) {
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  tmp[0] = sin(x[0]);
  MPI_Irecv(y, 1, MPI_DOUBLE, (r + p - 1) % p, 5, MPI_COMM_WORLD, &req[0]);
  MPI_Isend(tmp, 1, MPI_DOUBLE, (r + 1) % p, 5, MPI_COMM_WORLD, &req[1]);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int r, p, failed = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  int use_test = argc > 1 && !strcmp(argv[1], "test");
  for (int round = 0; round < 2; round++) {
    double x = 0.3 + r, dx = 1.0 + r, y = -1, dy = -1, tmp, dtmp;
    MPI_Request req[2];
    __enzyme_fwddiff((void *)start, enzyme_dup, &x, &dx, enzyme_dup, &y, &dy, enzyme_dup, &tmp,
                     &dtmp, enzyme_const, req);
    if (use_test) {
      int flag = 0;
      while (!flag) MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE);
    } else if (round == 0) {
      MPI_Wait(&req[0], MPI_STATUS_IGNORE);
      MPI_Wait(&req[1], MPI_STATUS_IGNORE);
    } else {
      MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    }
    int left = (r + p - 1) % p;
    double want = sin(0.3 + left), dwant = cos(0.3 + left) * (1.0 + left);
    int ok = fabs(y - want) < 1e-12 && fabs(dy - dwant) < 1e-12;
    printf("CHECK rank%d_round%d y=%.15g (%.15g) dy=%.15g (%.15g)%s\n", r, round, y, want, dy,
           dwant, ok ? "" : "  <-- FAILED");
    failed += !ok;
  }
  int all;
  MPI_Allreduce(&failed, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (r == 0 && !all) printf("ALL OK\n");
  MPI_Finalize();
  return all != 0;
}
