/* Point to point: MPI_Send/Recv (a ring, wildcard tag), MPI_Sendrecv, a halo exchange with
 * MPI_Isend/Irecv completed by MPI_Wait and MPI_Waitall, a receive in a callee without active
 * arguments, MPI_PROC_NULL at the ends of a chain. */
#include "mpi_check.h"

/* ring: rank r sends x*x to r+1 and receives from r-1 (any tag, read from the status) */
double ring(double *x, int n) {
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  double y[N], z[N];
  MPI_Status st;
  for (int i = 0; i < n; i++) y[i] = x[i] * x[i];
  if (r % 2 == 0) {
    MPI_Send(y, n, MPI_DOUBLE, (r + 1) % p, 7, MPI_COMM_WORLD);
    MPI_Recv(z, n, MPI_DOUBLE, (r + p - 1) % p, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
  } else {
    MPI_Recv(z, n, MPI_DOUBLE, (r + p - 1) % p, 7, MPI_COMM_WORLD, &st);
    MPI_Send(y, n, MPI_DOUBLE, (r + 1) % p, 7, MPI_COMM_WORLD);
  }
  int cnt;
  MPI_Get_count(&st, MPI_DOUBLE, &cnt);
  double s = 0;
  for (int i = 0; i < cnt; i++) s += sin(z[i]) * x[i] + 0.1 * st.MPI_TAG * z[i];
  return s;
}
double ring_serial(double *X, int n, int p) {
  double s = 0;
  for (int r = 0; r < p; r++) {
    double *x = X + r * n, *from = X + ((r + p - 1) % p) * n;
    for (int i = 0; i < n; i++) {
      double z = from[i] * from[i];
      s += sin(z) * x[i] + 0.7 * z;
    }
  }
  return s;
}

/* Sendrecv: float data right, from the left */
double shift(double *x, int n) {
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  double y[N], z[N];
  for (int i = 0; i < n; i++) y[i] = exp(0.5 * x[i]);
  MPI_Sendrecv(y, n, MPI_DOUBLE, (r + 1) % p, 3, z, n, MPI_DOUBLE, (r + p - 1) % p, 3,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  double s = 0;
  for (int i = 0; i < n; i++) s += z[i] * z[i] * x[(i + 1) % n];
  return s;
}
double shift_serial(double *X, int n, int p) {
  double s = 0;
  for (int r = 0; r < p; r++) {
    double *x = X + r * n, *from = X + ((r + p - 1) % p) * n;
    for (int i = 0; i < n; i++) {
      double z = exp(0.5 * from[i]);
      s += z * z * x[(i + 1) % n];
    }
  }
  return s;
}

/* halo exchange on a periodic 1-D domain: x[0] to the left, x[n-1] to the right, nonblocking;
 * the right halo's requests are completed one by one, the left's with Waitall */
double halo(double *x, int n) {
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  int left = (r + p - 1) % p, right = (r + 1) % p;
  double u[N + 2];
  for (int i = 0; i < n; i++) u[i + 1] = x[i] * x[i];
  MPI_Request rq[4];
  MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &rq[0]);
  MPI_Irecv(&u[n + 1], 1, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &rq[1]);
  MPI_Isend(&u[n], 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &rq[2]);
  MPI_Isend(&u[1], 1, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &rq[3]);
  MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
  MPI_Wait(&rq[2], MPI_STATUS_IGNORE);
  MPI_Request two[2] = {rq[0], rq[3]};
  MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
  double s = 0;
  for (int i = 1; i <= n; i++) {
    double lap = u[i - 1] - 2 * u[i] + u[i + 1];
    s += lap * lap * x[i - 1];
  }
  return s;
}
double halo_serial(double *X, int n, int p) {
  double s = 0;
  for (int r = 0; r < p; r++) {
    double u[N + 2], *x = X + r * n, *l = X + ((r + p - 1) % p) * n, *rr = X + ((r + 1) % p) * n;
    for (int i = 0; i < n; i++) u[i + 1] = x[i] * x[i];
    u[0] = l[n - 1] * l[n - 1];
    u[n + 1] = rr[0] * rr[0];
    for (int i = 1; i <= n; i++) {
      double lap = u[i - 1] - 2 * u[i] + u[i + 1];
      s += lap * lap * x[i - 1];
    }
  }
  return s;
}

/* a callee without active arguments that receives active data: it takes part in the
 * derivative (its result is active, its receive has an adjoint send) */
__attribute__((noinline)) static double from_left(int tag) {
  int r, p;
  double b;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Recv(&b, 1, MPI_DOUBLE, (r + p - 1) % p, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return b;
}
double relay(double *x, int n) {
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  double a = x[0] * x[1], got;
  MPI_Request rq;
  MPI_Isend(&a, 1, MPI_DOUBLE, (r + 1) % p, 9, MPI_COMM_WORLD, &rq);
  got = from_left(9);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  return got * x[2] + x[3];
}
double relay_serial(double *X, int n, int p) {
  double s = 0;
  for (int r = 0; r < p; r++) {
    double *l = X + ((r + p - 1) % p) * n;
    s += l[0] * l[1] * X[r * n + 2] + X[r * n + 3];
  }
  return s;
}

/* a non-periodic chain: the end ranks talk to MPI_PROC_NULL (Sendrecv and Recv/Send) */
double chain(double *x, int n) {
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  int up = r > 0 ? r - 1 : MPI_PROC_NULL, down = r < p - 1 ? r + 1 : MPI_PROC_NULL;
  double a[2] = {x[0] * x[1], x[2]}, b[2] = {0.5, 0.25}, c = 1.5;
  MPI_Sendrecv(a, 2, MPI_DOUBLE, down, 4, b, 2, MPI_DOUBLE, up, 4, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  double e = x[3] * x[3];
  if (r % 2) {
    MPI_Send(&e, 1, MPI_DOUBLE, up, 6, MPI_COMM_WORLD);
    MPI_Recv(&c, 1, MPI_DOUBLE, down, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(&c, 1, MPI_DOUBLE, down, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&e, 1, MPI_DOUBLE, up, 6, MPI_COMM_WORLD);
  }
  return b[0] * x[3] + b[1] * b[1] + c * x[0];
}
double chain_serial(double *X, int n, int p) {
  double s = 0;
  for (int r = 0; r < p; r++) {
    double *x = X + r * n, b0 = 0.5, b1 = 0.25, c = 1.5;
    if (r > 0) b0 = X[(r - 1) * n] * X[(r - 1) * n + 1], b1 = X[(r - 1) * n + 2];
    if (r < p - 1) c = X[(r + 1) * n + 3] * X[(r + 1) * n + 3];
    s += b0 * x[3] + b1 * b1 + c * x[0];
  }
  return s;
}

int main(int argc, char **argv) {
  start(&argc, &argv);
  double x[N], v[N];
  init_x(x, v);
  TEST(ring, ring_serial);
  TEST(shift, shift_serial);
  TEST(halo, halo_serial);
  TEST(relay, relay_serial);
  TEST(chain, chain_serial);
  return finish();
}
