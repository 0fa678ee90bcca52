/* Driver of the Lagrangian hydrodynamics benchmark (bench/hydro.py), built three ways with
   enzyme-cc: serial, -fopenmp, and -DUSE_MPI with OMPI_CC=enzyme-cc mpicc. Our own code.

     hydro N STEPS REPS CHECK

   CHECK = 1: the gradient of the objective w.r.t. the initial element energies and node
   velocities against central finite differences on a few components (and, under MPI, the
   gathered distributed gradient against the single-rank one on every component); prints
   "check passed" or "check failed" and exits 1 on failure. CHECK = 0: median primal and
   gradient seconds of REPS calls and the peak resident memory after the primal calls and at the
   end (MiB; under MPI the largest rank's). */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
typedef double real;
#include "hydro_mesh.h"
#include "hydro_kernel.h"

void __enzyme_autodiff(void *, ...);
int enzyme_dup, enzyme_const;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
static int cmp(const void *a, const void *b) {
  double d = *(const double *)a - *(const double *)b;
  return (d > 0) - (d < 0);
}
static double peak_mib(void) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  return r.ru_maxrss / 1024.0;
}
static void barrier(void) {
#ifdef USE_MPI
  MPI_Barrier(MPI_COMM_WORLD);
#endif
}
static double global_max(double v) {
#ifdef USE_MPI
  double g;
  MPI_Allreduce(&v, &g, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return g;
#else
  return v;
#endif
}

static void gradient(const Mesh *m, real *e0, real *de, real *v0, real *dv, int steps) {
  memset(de, 0, sizeof(real) * m->ne);
  memset(dv, 0, sizeof(real) * 3 * m->nn);
  __enzyme_autodiff((void *)hydro_run, enzyme_const, m, enzyme_dup, e0, de, enzyme_dup, v0, dv,
                    enzyme_const, steps);
}

/* the whole box on this rank alone (under MPI: on MPI_COMM_SELF) */
static void setup(Mesh *m, int n, int nz, int kz0, int rank, int nranks) {
  hydro_mesh(m, n, nz, kz0, rank, nranks);
  hydro_masses(m);
#ifdef USE_MPI
  m->comm = nranks > 1 ? MPI_COMM_WORLD : MPI_COMM_SELF;
  real *buf = malloc(sizeof(real) * m->npl);
  sum_planes(m, m->nmass, 1, buf);
  free(buf);
#endif
}

/* global objective (the sum over the ranks of hydro_run) */
static double objective(const Mesh *m, real *e0, real *v0, int steps) {
  double o = hydro_run(m, e0, v0, steps);
#ifdef USE_MPI
  double g;
  MPI_Allreduce(&o, &g, 1, MPI_DOUBLE, MPI_SUM, m->comm);
  o = g;
#endif
  return o;
}

static double relerr(double ad, double ref, double scale) {
  return fabs(ad - ref) / fmax(fabs(ref), scale);
}

static int check(int n, int steps, int rank, int nranks) {
  Mesh m;
  int nz = n / nranks;
  setup(&m, n, nz, rank * nz, rank, nranks);
  real *e0 = malloc(sizeof(real) * m.ne), *v0 = malloc(sizeof(real) * 3 * m.nn);
  real *de = malloc(sizeof(real) * m.ne), *dv = malloc(sizeof(real) * 3 * m.nn);
  hydro_init(&m, e0, v0);
  gradient(&m, e0, de, v0, dv, steps);
  /* the reference gradient of the whole box: this one, or under MPI rank 0's single-rank run */
  Mesh g = m;
  real *ge = de, *gv = dv;
  int bad = 0;
  double worst = 0;
#ifdef USE_MPI
  if (nranks > 1) {
    if (rank == 0) {
      setup(&g, n, n, 0, 0, 1);
      real *e0g = malloc(sizeof(real) * g.ne), *v0g = malloc(sizeof(real) * 3 * g.nn);
      ge = malloc(sizeof(real) * g.ne); gv = malloc(sizeof(real) * 3 * g.nn);
      hydro_init(&g, e0g, v0g);
      gradient(&g, e0g, ge, v0g, gv, steps);
      /* gather the ranks' gradients; the shared planes' two copies add up */
      real *ae = calloc(g.ne, sizeof(real)), *av = calloc(3 * g.nn, sizeof(real));
      real *be = malloc(sizeof(real) * m.ne), *bv = malloc(sizeof(real) * 3 * m.nn);
      double scale = 0;
      for (int i = 0; i < g.ne; i++) scale = fmax(scale, fabs(ge[i]));
      for (int r = 0; r < nranks; r++) {
        if (r == 0) {
          memcpy(be, de, sizeof(real) * m.ne); memcpy(bv, dv, sizeof(real) * 3 * m.nn);
        } else {
          MPI_Recv(be, m.ne, MPI_DOUBLE, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Recv(bv, 3 * m.nn, MPI_DOUBLE, r, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        for (int i = 0; i < m.ne; i++) ae[r * m.ne + i] += be[i];
        for (int d = 0; d < 3; d++)
          for (int i = 0; i < m.nn; i++) av[d * g.nn + r * nz * m.npl + i] += bv[d * m.nn + i];
      }
      double we = 0, wv = 0;
      for (int i = 0; i < g.ne; i++) we = fmax(we, relerr(ae[i], ge[i], 1e-3 * scale));
      for (int i = 0; i < 3 * g.nn; i++) wv = fmax(wv, relerr(av[i], gv[i], 1e-3 * scale));
      printf("%d ranks vs 1 rank, all %d + %d components: max rel. error %.3g (energies) "
             "%.3g (velocities)\n", nranks, g.ne, 3 * g.nn, we, wv);
      worst = fmax(we, wv);
      if (worst > 1e-9) bad = 1;
      free(ae); free(av); free(be); free(bv);
    } else {
      MPI_Send(de, m.ne, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
      MPI_Send(dv, 3 * m.nn, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
    }
  }
#endif
  /* central differences of the (distributed) objective: global element / velocity indices */
  int N = n + 1, NN = N * N * N, ids[10];
  ids[0] = 0; ids[1] = n * n * n / 3 + 1; ids[2] = n * n * n / 2 + n / 2; ids[3] = n * n * n - 1;
  ids[4] = (n * n * n) / 5 + 2 * n;
  ids[5] = -1 - (N * N * (n / 2) + N + 1);              /* velocities, encoded as -1 - index */
  ids[6] = -1 - (NN + N * N * (n / 2) + N * (n / 2) + 1);
  ids[7] = -1 - (2 * NN + N * N * n + N * n + n);
  ids[8] = -1 - (2 * NN + N * N * (n / 2) + N * 2 + 3);
  ids[9] = -1 - (N * N + N + 1);
  double scale = 0;
  for (int i = 0; i < g.ne; i++) scale = fmax(scale, fabs(ge[i]));
  for (int t = 0; t < 10; t++) {
    int velo = ids[t] < 0, gi = velo ? -1 - ids[t] : ids[t];
    /* which local entry holds the global one (-1: not on this rank); velocities: every copy */
    int loc = -1;
    if (!velo) {
      if (gi >= m.kz0 * n * n && gi < (m.kz0 + m.nz) * n * n) loc = gi - m.kz0 * n * n;
    } else {
      int d = gi / NN, gn = gi % NN, k = gn / (N * N);
      if (k >= m.kz0 && k <= m.kz0 + m.nz) loc = d * m.nn + gn - m.kz0 * N * N;
    }
    real *arr = velo ? v0 : e0;
    double x = loc >= 0 ? arr[loc] : 0, h = 1e-5;  /* the same step on every rank */
    if (loc >= 0) arr[loc] = x + h;
    double fp = objective(&m, e0, v0, steps);
    if (loc >= 0) arr[loc] = x - h;
    double fm = objective(&m, e0, v0, steps);
    if (loc >= 0) arr[loc] = x;
    double fd = (fp - fm) / (2 * h), ad = rank == 0 ? (velo ? gv[gi] : ge[gi]) : fd;
    double err = relerr(ad, fd, 1e-3 * scale);
    worst = fmax(worst, err);
    if (rank == 0)
      printf("%s[%d] AD %.10g FD %.10g rel. error %.2g\n", velo ? "v0" : "e0", gi, ad, fd, err);
    if (err > 1e-5) bad = 1;
  }
#ifdef USE_MPI
  int b = bad;
  MPI_Allreduce(&b, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#endif
  if (rank == 0) {
    printf("objective %.12g\n", objective(&m, e0, v0, steps));
    printf(bad ? "check failed (max rel. error %.3g)\n" : "check passed (max rel. error %.3g)\n",
           worst);
  } else {
    objective(&m, e0, v0, steps);
  }
  return bad;
}

static void timing(int n, int steps, int reps, int rank, int nranks) {
  Mesh m;
  int nz = n / nranks;
  setup(&m, n, nz, rank * nz, rank, nranks);
  real *e0 = malloc(sizeof(real) * m.ne), *v0 = malloc(sizeof(real) * 3 * m.nn);
  real *de = malloc(sizeof(real) * m.ne), *dv = malloc(sizeof(real) * 3 * m.nn);
  hydro_init(&m, e0, v0);
  double tp[64], tg[64];
  volatile double sink = 0;
  for (int r = 0; r < reps; r++) {
    barrier();
    double t0 = now();
    sink += hydro_run(&m, e0, v0, steps);
    barrier();
    tp[r] = now() - t0;
  }
  double rss_primal = global_max(peak_mib());
  for (int r = 0; r < reps; r++) {
    barrier();
    double t0 = now();
    gradient(&m, e0, de, v0, dv, steps);
    barrier();
    tg[r] = now() - t0;
  }
  double rss = global_max(peak_mib());
  qsort(tp, reps, sizeof(double), cmp);
  qsort(tg, reps, sizeof(double), cmp);
  if (rank == 0)
    printf("primal %.6g gradient %.6g rss_primal %.1f rss %.1f\n", tp[reps / 2], tg[reps / 2],
           rss_primal, rss);
}

int main(int argc, char **argv) {
  int rank = 0, nranks = 1;
#ifdef USE_MPI
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
#endif
  if (argc < 5) {
    fprintf(stderr, "usage: %s N STEPS REPS CHECK\n", argv[0]);
    return 2;
  }
  int n = atoi(argv[1]), steps = atoi(argv[2]), reps = atoi(argv[3]), chk = atoi(argv[4]), rc = 0;
  if (n % nranks || reps < 1 || reps > 64) {
    if (rank == 0) fprintf(stderr, "N must be divisible by the ranks, 1 <= REPS <= 64\n");
    rc = 2;
  } else if (chk) {
    rc = check(n, steps, rank, nranks);
  } else {
    timing(n, steps, reps, rank, nranks);
  }
#ifdef USE_MPI
  MPI_Finalize();
#endif
  return rc;
}
