/* Datatypes and reductions held in variables: a global chosen at start-up and fields of a
 * communication context, as codes that build with float or double keep them
 * (rules/mpi_c_typed.c compares them at run time with the float types and the reductions with
 * derivatives; integer data passes the run-time check); and two reductions in the arms of a
 * branch (Nek5000's gop), which the optimizer must not merge into one call of a phi. */
#include "mpi_check.h"

typedef struct {
  MPI_Datatype real, index;
  MPI_Op sum;
  MPI_Comm comm;
} Context;
static MPI_Datatype real_type;            /* MPI_DOUBLE, chosen at run time */
static Context ctx;
static volatile int use_double = 1;       /* (not a constant to the optimizer) */

/* Sendrecv to the right and an Allreduce, both given real_type */
double shift_sum(double *x, int n) {
  int r, p;
  MPI_Comm_rank(ctx.comm, &r);
  MPI_Comm_size(ctx.comm, &p);
  double y[N], z[N], s = 0, t;
  for (int i = 0; i < n; i++) y[i] = x[i] * x[i];
  MPI_Sendrecv(y, n, real_type, (r + 1) % p, 5, z, n, ctx.real, (r + p - 1) % p, 5, ctx.comm,
               MPI_STATUS_IGNORE);
  for (int i = 0; i < n; i++) s += sin(z[i]) * x[i];
  MPI_Allreduce(&s, &t, 1, ctx.real, ctx.sum, ctx.comm);
  return t / p + 0.5 * s;
}
double shift_sum_serial(double *X, int n, int p) {
  double s = 0;
  for (int r = 0; r < p; r++) {
    double *x = X + r * n, *from = X + ((r + p - 1) % p) * n;
    for (int i = 0; i < n; i++) s += 1.5 * sin(from[i] * from[i]) * x[i];
  }
  return s;
}

/* Nek5000's gop: the reduction chosen by a flag */
__attribute__((noinline)) static void gop(double *v, int n, char how) {
  if (how == '+')
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, ctx.comm);
  else if (how == 'M')
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, ctx.comm);
}

/* nonblocking halo exchange and an Allgather, with a count agreed by an integer Allreduce whose
 * datatype is held in the context too */
double halo_gather(double *x, int n, int p_unused) {
  (void)p_unused;
  int r, p, m = n, mmax;
  MPI_Comm_rank(ctx.comm, &r);
  MPI_Comm_size(ctx.comm, &p);
  MPI_Allreduce(&m, &mmax, 1, ctx.index, MPI_MAX, ctx.comm);
  double left = 0, right = 0, all[MAXP * N];
  MPI_Request q[4];
  MPI_Irecv(&left, 1, ctx.real, (r + p - 1) % p, 1, ctx.comm, &q[0]);
  MPI_Irecv(&right, 1, real_type, (r + 1) % p, 2, ctx.comm, &q[1]);
  MPI_Isend(&x[n - 1], 1, real_type, (r + 1) % p, 1, ctx.comm, &q[2]);
  MPI_Isend(&x[0], 1, ctx.real, (r + p - 1) % p, 2, ctx.comm, &q[3]);
  MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
  MPI_Allgather(x, n, ctx.real, all, n, real_type, ctx.comm);
  double s = left * x[0] + right * right * x[n - 1], g = x[1] * x[1];
  gop(&g, 1, '+');
  s += g / p;
  for (int k = 0; k < p * mmax; k++) s += 0.01 * (k + 1) * all[k] * all[k] / p;
  return s;
}
double halo(double *x, int n) { return halo_gather(x, n, 0); }
double halo_serial(double *X, int n, int p) {
  double s = 0;
  for (int r = 0; r < p; r++) {
    double *x = X + r * n, left = X[((r + p - 1) % p) * n + n - 1], right = X[((r + 1) % p) * n];
    s += left * x[0] + right * right * x[n - 1] + x[1] * x[1];
  }
  for (int k = 0; k < p * n; k++) s += 0.01 * (k + 1) * X[k] * X[k];
  return s;
}

int main(int argc, char **argv) {
  start(&argc, &argv);
  real_type = use_double ? MPI_DOUBLE : MPI_FLOAT;
  ctx.real = real_type;
  ctx.index = use_double ? MPI_INT : MPI_LONG;
  ctx.sum = use_double ? MPI_SUM : MPI_MAX;
  ctx.comm = MPI_COMM_WORLD;
  double x[N], v[N];
  init_x(x, v);
  TEST(shift_sum, shift_sum_serial);
  TEST(halo, halo_serial);
  return finish();
}
