/* Checks shared by the MPI test programs (tests/test_mpi.py). Each rank owns x[N]; an objective
 * f(x, N) returns the rank's part of a global objective J = sum over ranks of f. Checked for
 * every rank's x:
 *   - reverse mode (every rank seeds 1): dx = dJ/dx, against central finite differences of the
 *     parallel primal and against the serial derivative (fs: J of all ranks' data computed in
 *     one process, differentiated on rank 0);
 *   - forward mode: the sum of the ranks' tangents in direction v, against finite differences
 *     along v and against the dot product <dx, v> (forward against reverse).
 * Rank 0 prints `CHECK name got expected` lines; the exit status is non-zero on a mismatch. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif
double __enzyme_autodiff(void *, ...);
double __enzyme_fwddiff(void *, ...);
#ifdef __cplusplus
}
#endif
int enzyme_dup, enzyme_const, enzyme_width;
typedef struct { double d[3]; } Lanes3;    /* vector forward mode, enzyme_width 3 */
#ifdef __cplusplus
extern "C"
#endif
Lanes3 __enzyme_fwddiff3(void *, ...) __asm__("__enzyme_fwddiff");

enum { N = 4, MAXP = 8 };
static int rank_, nprocs_, failed_;
static double tol_ = 1e-5, h_ = 1e-6;  /* relative tolerance, FD step: float data needs more */

static void check(const char *name, double got, double want) {
  int ok = fabs(got - want) <= tol_ * (1.0 + fabs(want));
  failed_ += !ok;
  if (rank_ == 0 || !ok)
    printf("CHECK %s %.12g %.12g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
}

static double global_sum(double v) {
  double s;
  MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return s;
}

static void init_x(double *x, double *v) {
  for (int i = 0; i < N; i++) {
    x[i] = 0.3 + 0.9 * sin(1.0 + i + 3.7 * rank_);
    v[i] = cos(2.0 + 1.3 * i + 0.7 * rank_);
  }
}

typedef double (*obj_t)(double *, int);
typedef double (*serial_t)(double *, int, int);

/* J with x moved by h along direction e (every rank its own e) */
static double J_at(obj_t f, const double *x, const double *e, double h) {
  double y[N];
  for (int i = 0; i < N; i++) y[i] = x[i] + h * e[i];
  return global_sum(f(y, N));
}

/* dx: this rank's reverse-mode gradient; tan: this rank's forward-mode tangent along v;
 * sdx: on rank 0, the serial gradient of all ranks' data (nprocs*N) or NULL */
static void verify(const char *name, obj_t f, const double *x, const double *v,
                   const double *dx, double tan, const double *sdx) {
  const double h = h_;
  double fd[N], e[N], all_dx[MAXP * N], all_fd[MAXP * N];
  for (int r = 0; r < nprocs_; r++)
    for (int i = 0; i < N; i++) {
      for (int k = 0; k < N; k++) e[k] = (rank_ == r && k == i) ? 1.0 : 0.0;
      double d = (J_at(f, x, e, h) - J_at(f, x, e, -h)) / (2 * h);
      if (rank_ == r) fd[i] = d;
    }
  MPI_Gather(dx, N, MPI_DOUBLE, all_dx, N, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Gather(fd, N, MPI_DOUBLE, all_fd, N, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  char buf[96];
  if (rank_ == 0)
    for (int k = 0; k < nprocs_ * N; k++) {
      snprintf(buf, sizeof buf, "%s_rev_fd[%d]", name, k);
      check(buf, all_dx[k], all_fd[k]);
      if (sdx) {
        snprintf(buf, sizeof buf, "%s_rev_serial[%d]", name, k);
        check(buf, all_dx[k], sdx[k]);
      }
    }
  double t = global_sum(tan);
  double dot = 0;
  for (int i = 0; i < N; i++) dot += dx[i] * v[i];
  dot = global_sum(dot);
  double fdv = (J_at(f, x, v, h) - J_at(f, x, v, -h)) / (2 * h);
  snprintf(buf, sizeof buf, "%s_fwd_fd", name);
  check(buf, t, fdv);
  snprintf(buf, sizeof buf, "%s_fwd_dot", name);
  check(buf, t, dot);
}

/* every rank's x on rank 0 (for the serial computation) */
static void gather_x(const double *x, double *all) {
  MPI_Gather(x, N, MPI_DOUBLE, all, N, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

/* vector forward mode (enzyme_width 3; the tangents of all lanes travel in the same messages):
 * each lane equals the scalar forward mode along the same direction (checked against finite
 * differences by verify). A macro: the marker needs f known at compile time. */
static void lane_dirs(double dirs[3][N], const double *v) {
  for (int i = 0; i < N; i++) {
    dirs[0][i] = v[i];
    dirs[1][i] = i == rank_ % N;
    dirs[2][i] = 0.5 * v[N - 1 - i] - 0.25 * i;
  }
}
#define VECTOR_LANES(f)                                                                      \
  do {                                                                                       \
    double d_[3][N], c_[3][N];                                                               \
    char b_[96];                                                                             \
    lane_dirs(d_, v);                                                                        \
    memcpy(c_, d_, sizeof c_);                                                               \
    Lanes3 t_ = __enzyme_fwddiff3((void *)f, enzyme_width, 3, enzyme_dup, x, c_[0], c_[1],   \
                                  c_[2], enzyme_const, N);                                   \
    for (int k_ = 0; k_ < 3; k_++) {                                                         \
      memcpy(c_[k_], d_[k_], sizeof c_[k_]);                                                 \
      double s_ = __enzyme_fwddiff((void *)f, enzyme_dup, x, c_[k_], enzyme_const, N);       \
      snprintf(b_, sizeof b_, "%s_fwd_lane[%d]", #f, k_);                                    \
      check(b_, global_sum(t_.d[k_]), global_sum(s_));                                       \
    }                                                                                        \
  } while (0)

/* reverse and forward mode of f and the serial gradient of fs, then the checks */
#define TEST(f, fs)                                                                          \
  do {                                                                                       \
    double dx_[N] = {0}, dv_[N], all_[MAXP * N], sdx_[MAXP * N] = {0};                       \
    memcpy(dv_, v, sizeof dv_);                                                              \
    __enzyme_autodiff((void *)f, enzyme_dup, x, dx_, enzyme_const, N);                       \
    double t_ = __enzyme_fwddiff((void *)f, enzyme_dup, x, dv_, enzyme_const, N);            \
    gather_x(x, all_);                                                                       \
    if (rank_ == 0)                                                                          \
      __enzyme_autodiff((void *)fs, enzyme_dup, all_, sdx_, enzyme_const, N, enzyme_const,   \
                        nprocs_);                                                            \
    verify(#f, f, x, v, dx_, t_, sdx_);                                                      \
    VECTOR_LANES(f);                                                                         \
  } while (0)

static void start(int *argc, char ***argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs_);
  if (nprocs_ > MAXP) MPI_Abort(MPI_COMM_WORLD, 2);
}

static int finish(void) {
  int bad = 0;
  MPI_Allreduce(&failed_, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) printf(bad ? "FAILED: %d check(s)\n" : "ALL OK\n", bad);
  MPI_Finalize();
  return bad != 0;
}
