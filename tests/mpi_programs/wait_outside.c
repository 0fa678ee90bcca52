/* Forward mode: the differentiated function starts a ring exchange (MPI_Irecv, MPI_Isend) and
 * returns; the caller completes the requests with its own calls, outside differentiated code:
 * MPI_Wait / MPI_Waitall by default, or the completion named by the argument (test, testall,
 * testany, testsome, waitany, waitsome). The received values and their tangents must arrive all
 * the same. With argument "free" the caller frees the receive request, which must stop with a
 * clear error (its message would never be unpacked). */
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

/* completes both requests the way `how` names */
static void complete(const char *how, int round, MPI_Request *req) {
  int flag = 0, idx, count, indices[2], done = 0;
  if (!strcmp(how, "test")) {
    while (!flag) MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE);
    flag = 0;
    while (!flag) MPI_Test(&req[1], &flag, MPI_STATUS_IGNORE);
  } else if (!strcmp(how, "testall")) {
    MPI_Status st[2];
    while (!flag) MPI_Testall(2, req, &flag, st);
  } else if (!strcmp(how, "testany")) {
    while (done < 2) {
      MPI_Testany(2, req, &idx, &flag, MPI_STATUS_IGNORE);
      done += flag && idx != MPI_UNDEFINED;
    }
  } else if (!strcmp(how, "waitany")) {
    MPI_Status st;
    for (int k = 0; k < 2; k++) MPI_Waitany(2, req, &idx, &st);
  } else if (!strcmp(how, "testsome") || !strcmp(how, "waitsome")) {
    MPI_Status st[2];
    while (done < 2) {
      if (how[0] == 't') MPI_Testsome(2, req, &count, indices, st);
      else MPI_Waitsome(2, req, &count, indices, MPI_STATUSES_IGNORE);
      if (count != MPI_UNDEFINED) done += count;
    }
  } else if (!strcmp(how, "free")) {
    MPI_Request_free(&req[0]);
  } else if (round == 0) {
    MPI_Wait(&req[0], MPI_STATUS_IGNORE);
    MPI_Wait(&req[1], MPI_STATUS_IGNORE);
  } else {
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int r, p, failed = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const char *how = argc > 1 ? argv[1] : "wait";
  for (int round = 0; round < 2; round++) {
    double x = 0.3 + r, dx = 1.0 + r, y = -1, dy = -1, tmp, dtmp;
    MPI_Request req[2];
    __enzyme_fwddiff((void *)start, enzyme_dup, &x, &dx, enzyme_dup, &y, &dy, enzyme_dup, &tmp,
                     &dtmp, enzyme_const, req);
    complete(how, round, req);
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
