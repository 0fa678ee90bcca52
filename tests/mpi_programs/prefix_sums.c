/* Prefix sums over the ranks: MPI_Scan and MPI_Exscan of float data (into another buffer, in
 * place, and with the datatype held in a variable), beside an integer MPI_Scan that computes an
 * offset (miniAMR's load balancing). Rank 0's Exscan result is undefined: the program sets it. */
#include "mpi_check.h"

static MPI_Datatype real_type;            /* MPI_DOUBLE, chosen at run time */
static volatile int use_double = 1;       /* (not a constant to the optimizer) */

double prefix(double *x, int n) {
  int r, count = n, offset;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  double y[N], s[N], e[N], t[N], u[N], out = 0;
  for (int i = 0; i < n; i++) {
    y[i] = x[i] * x[i] + sin(x[i]);
    t[i] = cos(x[i]);
    u[i] = x[i] * x[i] * x[i];
  }
  MPI_Scan(y, s, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);          /* s_r = sum_{j<=r} y_j */
  MPI_Exscan(y, e, n, real_type, MPI_SUM, MPI_COMM_WORLD);         /* e_r = sum_{j<r} y_j */
  MPI_Scan(MPI_IN_PLACE, t, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Exscan(MPI_IN_PLACE, u, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Scan(&count, &offset, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);  /* n (r + 1) */
  if (r == 0)
    for (int i = 0; i < n; i++) e[i] = u[i] = 0;
  for (int i = 0; i < n; i++)
    out += s[i] * x[i] + 0.5 * e[i] * e[i] + 0.1 * offset * t[i] * x[(i + 1) % n] + u[i] * x[i];
  return out;
}
double prefix_serial(double *X, int n, int p) {
  double out = 0;
  for (int r = 0; r < p; r++)
    for (int i = 0; i < n; i++) {
      double s = 0, e = 0, t = 0, u = 0, *x = X + r * n;
      for (int j = 0; j <= r; j++) {
        double xj = X[j * n + i], y = xj * xj + sin(xj);
        s += y;
        t += cos(xj);
        if (j < r) e += y, u += xj * xj * xj;
      }
      out += s * x[i] + 0.5 * e * e + 0.1 * n * (r + 1) * t * x[(i + 1) % n] + u * x[i];
    }
  return out;
}

int main(int argc, char **argv) {
  start(&argc, &argv);
  real_type = use_double ? MPI_DOUBLE : MPI_FLOAT;
  double x[N], v[N];
  init_x(x, v);
  TEST(prefix, prefix_serial);
  return finish();
}
