/* Collectives: Bcast, Reduce and Allreduce (sum, max, min, maxloc, minloc, in place), Gather(v),
 * Scatter(v), Allgather(v), Alltoall(v), Barrier; float data in one of them, global buffers in
 * another. */
#include "mpi_check.h"

static int rk(void) { int r; MPI_Comm_rank(MPI_COMM_WORLD, &r); return r; }
static int np(void) { int p; MPI_Comm_size(MPI_COMM_WORLD, &p); return p; }

/* the last rank's x*x reaches everybody */
double bcast(double *x, int n) {
  double b[N];
  int p = np();
  for (int i = 0; i < n; i++) b[i] = x[i] * x[i];
  MPI_Bcast(b, n, MPI_DOUBLE, p - 1, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  double s = 0;
  for (int i = 0; i < n; i++) s += sin(b[i]) * x[i];
  return s;
}
double bcast_serial(double *X, int n, int p) {
  double s = 0;
  for (int r = 0; r < p; r++)
    for (int i = 0; i < n; i++) s += sin(X[(p - 1) * n + i] * X[(p - 1) * n + i]) * X[r * n + i];
  return s;
}

/* sum to root 0, which uses it; every rank also gets an Allreduce sum in place */
double reduce_sum(double *x, int n) {
  double y[N], r[N] = {0}, a[N];
  for (int i = 0; i < n; i++) y[i] = exp(0.3 * x[i]), a[i] = x[i] * x[(i + 1) % n];
  MPI_Reduce(y, r, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, a, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * a[i] * x[i];
  if (rk() == 0)
    for (int i = 0; i < n; i++) s += r[i] * r[i];
  return s;
}
double reduce_sum_serial(double *X, int n, int p) {
  double s = 0, r[N] = {0}, a[N] = {0};
  for (int q = 0; q < p; q++)
    for (int i = 0; i < n; i++)
      r[i] += exp(0.3 * X[q * n + i]), a[i] += X[q * n + i] * X[q * n + (i + 1) % n];
  for (int q = 0; q < p; q++)
    for (int i = 0; i < n; i++) s += a[i] * a[i] * X[q * n + i];
  for (int i = 0; i < n; i++) s += r[i] * r[i];
  return s;
}

/* max and min (Allreduce), max to a root (Reduce), MAXLOC (Allreduce) and MINLOC (Reduce) over
 * (value, rank) */
double extrema(double *x, int n) {
  int me = rk(), p = np();
  double mx[N], mn[N], rm[N] = {0};
  struct { double v; int i; } loc[N], wl[N], ml[N];
  MPI_Allreduce(x, mx, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(x, mn, n, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Reduce(x, rm, n, MPI_DOUBLE, MPI_MAX, p - 1, MPI_COMM_WORLD);
  for (int i = 0; i < n; i++) loc[i].v = x[i] * x[i], loc[i].i = me;
  MPI_Allreduce(loc, wl, n, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
  for (int i = 0; i < n; i++) loc[i].v = cos(x[i]), loc[i].i = me;
  MPI_Reduce(loc, ml, n, MPI_DOUBLE_INT, MPI_MINLOC, 0, MPI_COMM_WORLD);
  double s = 0;
  for (int i = 0; i < n; i++) s += mx[i] * mn[i] * x[i] + wl[i].v * (wl[i].i + 1);
  if (me == p - 1)
    for (int i = 0; i < n; i++) s += sin(rm[i]);
  if (me == 0)
    for (int i = 0; i < n; i++) s += ml[i].v * (ml[i].i + 2);
  return s / p;
}
double extrema_serial(double *X, int n, int p) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    double mx = X[i], mn = X[i], wl = X[i] * X[i];
    int wi = 0;
    for (int q = 1; q < p; q++) {
      double v = X[q * n + i];
      mx = v > mx ? v : mx, mn = v < mn ? v : mn;
      if (v * v > wl) wl = v * v, wi = q;
    }
    for (int q = 0; q < p; q++) s += (mx * mn * X[q * n + i] + wl * (wi + 1)) / p;
    s += sin(mx) / p;
    double mc = cos(X[i]);
    int mi = 0;
    for (int q = 1; q < p; q++)
      if (cos(X[q * n + i]) < mc) mc = cos(X[q * n + i]), mi = q;
    s += mc * (mi + 2) / p;
  }
  return s;
}

/* buffers that are globals (and offsets into them): the received data makes them active */
double g_part[N], g_total[N], g_root[N];
double globals(double *x, int n) {
  for (int i = 0; i < n; i++) g_part[i] = x[i] * x[(i + 1) % n], g_root[i] = sin(x[i]);
  g_total[0] = x[0];
  MPI_Allreduce(g_part + 1, g_total + 1, n - 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Bcast(g_root, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  double s = 0;
  for (int i = 0; i < n; i++) s += g_total[i] * x[i] + g_root[i] * g_root[i] * x[(i + 2) % n];
  return s;
}
double globals_serial(double *X, int n, int p) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    double t = 0;
    for (int q = 0; q < p; q++) t += X[q * n + i] * X[q * n + (i + 1) % n];
    for (int q = 0; q < p; q++)
      s += (i ? t : X[q * n]) * X[q * n + i] + sin(X[i]) * sin(X[i]) * X[q * n + (i + 2) % n];
  }
  return s;
}

/* float data: sum and min (Allreduce), Bcast (checked with a float-sized tolerance) */
double floats(double *x, int n) {
  float f[N], fs[N], fm[N];
  for (int i = 0; i < n; i++) f[i] = (float)(x[i] * x[i]);
  MPI_Allreduce(f, fs, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(f, fm, n, MPI_FLOAT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Bcast(f, n, MPI_FLOAT, 0, MPI_COMM_WORLD);
  double s = 0;
  for (int i = 0; i < n; i++) s += (double)fs[i] * x[i] + fm[i] + f[i] * x[(i + 1) % n];
  return s;
}
double floats_serial(double *X, int n, int p) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    double sum = 0, mn = X[i] * X[i];
    for (int q = 0; q < p; q++) {
      double v = X[q * n + i] * X[q * n + i];
      sum += v, mn = v < mn ? v : mn;
    }
    for (int q = 0; q < p; q++) s += sum * X[q * n + i] + mn + X[i] * X[i] * X[q * n + (i + 1) % n];
  }
  return s;
}

/* Gather to root 0, which transforms; Scatter back; v-variants with rank-dependent counts */
double gather_scatter(double *x, int n) {
  int me = rk(), p = np();
  double y[N], all[MAXP * N], back[N], w[MAXP * N];
  for (int i = 0; i < n; i++) y[i] = x[i] * x[i];
  MPI_Gather(y, n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (me == 0)
    for (int k = 0; k < p * n; k++) w[k] = sin(all[k]) * all[(k + 1) % (p * n)];
  MPI_Scatter(w, n, MPI_DOUBLE, back, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  /* rank r contributes r % n + 1 entries; displacements leave a gap of one */
  int counts[MAXP], displs[MAXP], off = 0;
  for (int q = 0; q < p; q++) counts[q] = q % n + 1, displs[q] = off, off += counts[q] + 1;
  double vv[MAXP * (N + 1)] = {0}, mine[N] = {0};
  MPI_Gatherv(back, counts[me], MPI_DOUBLE, vv, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (me == 0)
    for (int k = 0; k < off; k++) vv[k] = vv[k] * vv[k] + cos(vv[k]);
  MPI_Scatterv(vv, counts, displs, MPI_DOUBLE, mine, counts[me], MPI_DOUBLE, 0, MPI_COMM_WORLD);
  double s = 0;
  for (int i = 0; i < n; i++) s += back[i] * x[i] + mine[i] * x[(i + 2) % n];
  return s;
}
double gather_scatter_serial(double *X, int n, int p) {
  double w[MAXP * N], s = 0;
  for (int k = 0; k < p * n; k++) {
    double a = X[k] * X[k], b = X[(k + 1) % (p * n)] * X[(k + 1) % (p * n)];
    w[k] = sin(a) * b;
  }
  for (int q = 0; q < p; q++)
    for (int i = 0; i < n; i++) {
      double m = i < q % n + 1 ? w[q * n + i] * w[q * n + i] + cos(w[q * n + i]) : 0.0;
      s += w[q * n + i] * X[q * n + i] + m * X[q * n + (i + 2) % n];
    }
  return s;
}

/* Allgather and Allgatherv (gaps, rank-dependent counts), Alltoall and Alltoallv */
double all_to_all(double *x, int n) {
  int me = rk(), p = np();
  double y[N], all[MAXP * N];
  for (int i = 0; i < n; i++) y[i] = x[i] * x[i];
  MPI_Allgather(y, n, MPI_DOUBLE, all, n, MPI_DOUBLE, MPI_COMM_WORLD);
  int counts[MAXP], displs[MAXP], off = 0;
  for (int q = 0; q < p; q++) counts[q] = (q + 1) % n + 1, displs[q] = off, off += counts[q] + 1;
  double av[MAXP * (N + 1)] = {0};
  MPI_Allgatherv(x, counts[me], MPI_DOUBLE, av, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
  /* block q of s goes to rank q */
  double s1[MAXP], r1[MAXP];
  for (int q = 0; q < p; q++) s1[q] = sin(x[q % n] + q);
  MPI_Alltoall(s1, 1, MPI_DOUBLE, r1, 1, MPI_DOUBLE, MPI_COMM_WORLD);
  /* Alltoallv: rank me sends q % 2 + 1 values to rank q */
  int sc[MAXP], sd[MAXP], rc[MAXP], rd[MAXP], so = 0, ro = 0;
  double s2[2 * MAXP], r2[2 * MAXP] = {0};
  for (int q = 0; q < p; q++) {
    sc[q] = q % 2 + 1, sd[q] = so, so += sc[q];
    rc[q] = me % 2 + 1, rd[q] = ro, ro += rc[q];
  }
  for (int k = 0; k < so; k++) s2[k] = x[k % n] * (k + 1);
  MPI_Alltoallv(s2, sc, sd, MPI_DOUBLE, r2, rc, rd, MPI_DOUBLE, MPI_COMM_WORLD);
  double s = 0;
  for (int k = 0; k < p * n; k++) s += all[k] * cos(x[k % n]);
  for (int k = 0; k < off; k++) s += av[k] * av[k] * x[k % n];
  for (int q = 0; q < p; q++) s += r1[q] * r1[q] * x[q % n];
  for (int k = 0; k < ro; k++) s += r2[k] * r2[k] * x[(k + 1) % n];
  return s;
}
double all_to_all_serial(double *X, int n, int p) {
  double s = 0;
  for (int me = 0; me < p; me++) {
    double *x = X + me * n;
    for (int k = 0; k < p * n; k++) s += X[k] * X[k] * cos(x[k % n]);
    int k = 0;
    for (int q = 0; q < p; q++) {
      for (int i = 0; i < (q + 1) % n + 1; i++, k++) s += X[q * n + i] * X[q * n + i] * x[k % n];
      k++;                                  /* the gap */
    }
    for (int q = 0; q < p; q++) {
      double r = sin(X[q * n + me % n] + me);     /* rank q's block me */
      s += r * r * x[q % n];
    }
    int ro = 0;
    for (int q = 0; q < p; q++) {            /* rank q's values for me: its k = sd_q[me] + j */
      int start = 0;
      for (int t = 0; t < me; t++) start += t % 2 + 1;
      for (int j = 0; j < me % 2 + 1; j++, ro++) {
        int kk = start + j;
        double r = X[q * n + kk % n] * (kk + 1);
        s += r * r * x[(ro + 1) % n];
      }
    }
  }
  return s;
}

int main(int argc, char **argv) {
  start(&argc, &argv);
  double x[N], v[N];
  init_x(x, v);
  TEST(bcast, bcast_serial);
  TEST(reduce_sum, reduce_sum_serial);
  TEST(extrema, extrema_serial);
  TEST(gather_scatter, gather_scatter_serial);
  TEST(globals, globals_serial);
  tol_ = 2e-3, h_ = 1e-2;
  TEST(floats, floats_serial);
  tol_ = 1e-5, h_ = 1e-6;
  TEST(all_to_all, all_to_all_serial);
  return finish();
}
