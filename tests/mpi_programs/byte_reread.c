/* A byte message's send buffer read again after the send: its shadow holds adjoints when the
 * message's adjoint bytes come back, which bytes of unknown layout cannot be added to: the run
 * stops with a message (tests/test_mpi.py test_byte_message_into_a_read_buffer_stops). */
#include "mpi_check.h"
double reread(double *x, int n) {
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  double *send = malloc(n * sizeof(double)), *recv = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) send[i] = exp(0.5 * x[i]);
  MPI_Sendrecv(send, n * 8, MPI_BYTE, (r + 1) % p, 5, recv, n * 8, MPI_BYTE, (r + p - 1) % p, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  double s = 0;
  for (int i = 0; i < n; i++) s += recv[i] * send[i];
  free(send); free(recv);
  return s;
}
double reread_serial(double *X, int n, int p) {
  double s = 0;
  for (int r = 0; r < p; r++) { double *x = X + r * n, *l = X + ((r + p - 1) % p) * n;
    for (int i = 0; i < n; i++) s += exp(0.5 * l[i]) * exp(0.5 * x[i]); }
  return s;
}
int main(int argc, char **argv) {
  start(&argc, &argv);
  double x[N], v[N];
  init_x(x, v);
  TEST(reread, reread_serial);
  return finish();
}
