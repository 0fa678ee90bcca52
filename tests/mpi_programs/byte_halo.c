/* Halo exchanges of packed byte messages (CoMD's pattern): records {int gid, int type,
 * double r[2]} packed into a malloc'd char buffer and sent as MPI_BYTE with MPI_Sendrecv, and
 * plain doubles sent as MPI_BYTE with MPI_Isend/Irecv. The messages' shadow bytes travel with
 * them; the adjoint bytes go back into send buffers that nothing reads after the send. Raw
 * bytes sent as one-byte characters (jl's comm.h sends every message as MPI_UNSIGNED_CHAR)
 * are bytes too: they were taken for integer data, and their derivative was silently lost. */
#include "mpi_check.h"

typedef struct { int gid, type; double r[2]; } Rec;

/* records to the right, from the left: z_i = (x_left,i)^2 and 3 x_left,i */
double records(double *x, int n) {
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  char *send = malloc(n * sizeof(Rec)), *recv = malloc(n * sizeof(Rec));
  Rec *out = (Rec *)send;
  for (int i = 0; i < n; i++) {
    out[i].gid = n - 1 - i;
    out[i].type = r;
    out[i].r[0] = x[i] * x[i];
    out[i].r[1] = 3 * x[i];
  }
  MPI_Sendrecv(send, n * (int)sizeof(Rec), MPI_BYTE, (r + 1) % p, 5, recv,
               n * (int)sizeof(Rec), MPI_BYTE, (r + p - 1) % p, 5, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  double s = 0;
  const Rec *in = (const Rec *)recv;
  for (int i = 0; i < n; i++) {
    int k = n - 1 - in[i].gid;            /* (the sender's index) */
    s += sin(in[i].r[0]) * x[k] + in[i].r[1] * in[i].r[1] * (1 + in[i].type % 2);
  }
  free(send);
  free(recv);
  return s;
}
double records_serial(double *X, int n, int p) {
  double s = 0;
  for (int r = 0; r < p; r++) {
    int from = (r + p - 1) % p;
    double *x = X + r * n, *l = X + from * n;
    for (int k = 0; k < n; k++)
      s += sin(l[k] * l[k]) * x[k] + 9 * l[k] * l[k] * (1 + from % 2);
  }
  return s;
}

/* doubles as bytes, nonblocking, to the left: z_i = exp(x_right,i / 2) */
double doubles(double *x, int n) {
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  double *send = malloc(n * sizeof(double)), *recv = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) send[i] = exp(0.5 * x[i]);
  MPI_Request rq[2];
  MPI_Irecv(recv, n * (int)sizeof(double), MPI_BYTE, (r + 1) % p, 8, MPI_COMM_WORLD, &rq[0]);
  MPI_Isend(send, n * (int)sizeof(double), MPI_BYTE, (r + p - 1) % p, 8, MPI_COMM_WORLD,
            &rq[1]);
  MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
  double s = 0;
  for (int i = 0; i < n; i++) s += recv[i] * x[(i + 1) % n];
  free(send);
  free(recv);
  return s;
}
double doubles_serial(double *X, int n, int p) {
  double s = 0;
  for (int r = 0; r < p; r++) {
    double *x = X + r * n, *rr = X + ((r + 1) % p) * n;
    for (int i = 0; i < n; i++) s += exp(0.5 * rr[i]) * x[(i + 1) % n];
  }
  return s;
}

/* doubles as characters: x^3 to the right as MPI_UNSIGNED_CHAR, then back to the left as
 * MPI_CHAR with MPI_Sendrecv: z_i = x_i^3 cos(x_i) */
double chars(double *x, int n) {
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  int bytes = n * (int)sizeof(double);
  double *send = malloc(bytes), *recv = malloc(bytes), *back = malloc(bytes);
  for (int i = 0; i < n; i++) send[i] = x[i] * x[i] * x[i];
  MPI_Request rq[2];
  MPI_Irecv(recv, bytes, MPI_UNSIGNED_CHAR, (r + p - 1) % p, 9, MPI_COMM_WORLD, &rq[0]);
  MPI_Isend(send, bytes, MPI_UNSIGNED_CHAR, (r + 1) % p, 9, MPI_COMM_WORLD, &rq[1]);
  MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
  MPI_Sendrecv(recv, bytes, MPI_CHAR, (r + p - 1) % p, 10, back, bytes, MPI_CHAR,
               (r + 1) % p, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  double s = 0;
  for (int i = 0; i < n; i++) s += back[i] * cos(x[i]);
  free(send);
  free(recv);
  free(back);
  return s;
}
double chars_serial(double *X, int n, int p) {
  double s = 0;
  for (int i = 0; i < n * p; i++) s += X[i] * X[i] * X[i] * cos(X[i]);
  return s;
}

int main(int argc, char **argv) {
  start(&argc, &argv);
  double x[N], v[N];
  init_x(x, v);
  TEST(records, records_serial);
  TEST(doubles, doubles_serial);
  TEST(chars, chars_serial);
  return finish();
}
