// C++: a few explicit steps of 1-D heat diffusion on a periodic domain split over the ranks,
// with the state in std::vector and halos exchanged by MPI_Isend/Irecv/Waitall; the objective
// is a global energy (MPI_Allreduce), each rank returning its share.
#include <vector>
#include "mpi_check.h"

static void exchange(std::vector<double> &u, MPI_Comm comm) {
  int r, p;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &p);
  int n = (int)u.size() - 2, left = (r + p - 1) % p, right = (r + 1) % p;
  MPI_Request rq[4];
  MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, 0, comm, &rq[0]);
  MPI_Irecv(&u[n + 1], 1, MPI_DOUBLE, right, 1, comm, &rq[1]);
  MPI_Isend(&u[n], 1, MPI_DOUBLE, right, 0, comm, &rq[2]);
  MPI_Isend(&u[1], 1, MPI_DOUBLE, left, 1, comm, &rq[3]);
  MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
}

double heat(double *x, int n) {
  std::vector<double> u(n + 2), next(n + 2);
  for (int i = 0; i < n; i++) u[i + 1] = x[i];
  for (int step = 0; step < 3; step++) {
    exchange(u, MPI_COMM_WORLD);
    for (int i = 1; i <= n; i++) next[i] = u[i] + 0.2 * (u[i - 1] - 2 * u[i] + u[i + 1]) + 0.05 * u[i] * u[i];
    u.swap(next);
  }
  double e = 0, total;
  for (int i = 1; i <= n; i++) e += u[i] * u[i];
  MPI_Allreduce(&e, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  int p;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  return sqrt(total) / p;           // every rank's share of the global norm
}

double heat_serial(double *X, int n, int p) {
  int m = n * p;
  std::vector<double> u(X, X + m), next(m);
  for (int step = 0; step < 3; step++) {
    for (int i = 0; i < m; i++) {
      double l = u[(i + m - 1) % m], r = u[(i + 1) % m];
      next[i] = u[i] + 0.2 * (l - 2 * u[i] + r) + 0.05 * u[i] * u[i];
    }
    u.swap(next);
  }
  double e = 0;
  for (int i = 0; i < m; i++) e += u[i] * u[i];
  return sqrt(e);
}

int main(int argc, char **argv) {
  start(&argc, &argv);
  double x[N], v[N];
  init_x(x, v);
  TEST(heat, heat_serial);
  return finish();
}
