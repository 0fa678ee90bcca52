/* MPI + OpenMP in one program: each rank works on its part with OpenMP threads (a parallel loop
 * with a reduction, and a parallel loop writing shared memory), between MPI exchanges (a ring
 * Sendrecv of a boundary value and an Allreduce). Checked as the other MPI programs
 * (mpi_check.h): reverse and forward mode against finite differences and the serial derivative,
 * on 1, 2 and 4 ranks, with OMP_NUM_THREADS from the test (1, 2). */
#include "mpi_check.h"

/* this rank's part: y_i = sin(x_i) * (left neighbour's x_{N-1}); s = sum_i y_i^2 + x_i,
 * then the global mean of s scales the rank's contribution */
double hybrid(double *x, int n) {
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  double left;
  MPI_Sendrecv(&x[n - 1], 1, MPI_DOUBLE, (r + 1) % p, 3, &left, 1, MPI_DOUBLE, (r + p - 1) % p,
               3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  double y[N];
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++) y[i] = sin(x[i]) * left;
  double s = 0;
#pragma omp parallel for reduction(+ : s)
  for (int i = 0; i < n; i++) s += y[i] * y[i] + x[i];
  double total;
  MPI_Allreduce(&s, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return s * total / p;
}

/* the same for all ranks' data in one process (p blocks of n) */
double hybrid_serial(double *x, int n, int p) {
  double s[MAXP], total = 0, J = 0;
  for (int r = 0; r < p; r++) {
    double left = x[((r + p - 1) % p) * n + n - 1];
    s[r] = 0;
    for (int i = 0; i < n; i++) {
      double y = sin(x[r * n + i]) * left;
      s[r] += y * y + x[r * n + i];
    }
    total += s[r];
  }
  for (int r = 0; r < p; r++) J += s[r] * total / p;
  return J;
}

int main(int argc, char **argv) {
  start(&argc, &argv);
  double x[N], v[N];
  init_x(x, v);
  TEST(hybrid, hybrid_serial);
  return finish();
}
