/* Hand-written adjoints of brusselator_2d_loop (bruss.h), reference points for the AD variant
 * (docs/performance.md, "Bruss at N = 512"). Same contract as the enzyme variant: the seeds
 * su, sv (shadows of du, dv) are consumed (zeroed) and the gradient is added into gu, gv, gp.
 *   scatter: the structure reverse-mode AD produces: rows and columns walked backwards, every
 *            read of u or v in the stencil becomes an addition into that point's adjoint (five
 *            read-modify-writes per array per point, 14 row streams at once).
 *   taped:   scatter, but the forward sweep pushes the four values per point the reverse needs
 *            (both Laplacians, u and v), so the reverse reads no neighbour rows of u and v (9 row
 *            streams instead of 14; the tape is one sequential stream).
 *   gather:  the transposed stencil: each gradient entry gathers the seeds of its neighbours and
 *            is written once (2 read-modify-writes per point, but the seeds are read 5 times). */
#ifndef BENCH_BRUSS_HAND_H
#define BENCH_BRUSS_HAND_H
#include <stdlib.h>
#include <string.h>

#define BRUSS_NEIGHBOURS                          \
  int ip1 = (i == N - 1) ? 0 : i + 1;             \
  int im1 = (i == 0) ? N - 1 : i - 1;             \
  int jp1 = (j == N - 1) ? 0 : j + 1;             \
  int jm1 = (j == 0) ? N - 1 : j - 1;

static void bruss_hand_scatter(double *__restrict su, double *__restrict sv,
                               const double *__restrict u, const double *__restrict v,
                               const double *__restrict p, double *__restrict gu,
                               double *__restrict gv, double *__restrict gp, int N) {
  double A = p[0], dx = 1.0 / (N - 1), scale = 1.0 / (dx * dx), alpha = p[2] * scale;
  double dA = 0, dB = 0, dalpha = 0;
  for (int i = N - 1; i >= 0; i--)
    for (int j = N - 1; j >= 0; j--) {
      BRUSS_NEIGHBOURS
      double a = BRUSS_GET(su, i, j), b = BRUSS_GET(sv, i, j);
      BRUSS_GET(su, i, j) = 0;
      BRUSS_GET(sv, i, j) = 0;
      double uc = BRUSS_GET(u, i, j), vc = BRUSS_GET(v, i, j);
      double lapu = BRUSS_GET(u, im1, j) + BRUSS_GET(u, ip1, j) + BRUSS_GET(u, i, jp1) +
                    BRUSS_GET(u, i, jm1) - 4 * uc;
      double lapv = BRUSS_GET(v, im1, j) + BRUSS_GET(v, ip1, j) + BRUSS_GET(v, i, jp1) +
                    BRUSS_GET(v, i, jm1) - 4 * vc;
      dalpha += a * lapu + b * lapv;
      dB += a;
      dA += (b - a) * uc;
      double ta = alpha * a, tb = alpha * b, w = a - b;
      BRUSS_GET(gu, i, jm1) += ta;
      BRUSS_GET(gu, i, jp1) += ta;
      BRUSS_GET(gu, ip1, j) += ta;
      BRUSS_GET(gu, im1, j) += ta;
      BRUSS_GET(gv, i, jm1) += tb;
      BRUSS_GET(gv, i, jp1) += tb;
      BRUSS_GET(gv, ip1, j) += tb;
      BRUSS_GET(gv, im1, j) += tb;
      BRUSS_GET(gu, i, j) += -4 * ta + 2 * w * uc * vc - (A + 1) * a + A * b;
      BRUSS_GET(gv, i, j) += -4 * tb + w * uc * uc;
    }
  gp[0] += dA;
  gp[1] += dB;
  gp[2] += dalpha * scale;
}

static void bruss_hand_taped(double *__restrict su, double *__restrict sv,
                             const double *__restrict u, const double *__restrict v,
                             const double *__restrict p, double *__restrict gu,
                             double *__restrict gv, double *__restrict gp, int N) {
  static double *tape;                     /* kept between calls, like AD's spare tape */
  static size_t tape_n;
  size_t need = 4 * (size_t)N * N;
  if (tape_n < need) {
    free(tape);
    tape = (double *)malloc(sizeof(double) * need);
    tape_n = need;
  }
  double A = p[0], dx = 1.0 / (N - 1), scale = 1.0 / (dx * dx), alpha = p[2] * scale;
  double dA = 0, dB = 0, dalpha = 0;
  double *__restrict top = tape;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      BRUSS_NEIGHBOURS
      double uc = BRUSS_GET(u, i, j), vc = BRUSS_GET(v, i, j);
      top[0] = BRUSS_GET(u, im1, j) + BRUSS_GET(u, ip1, j) + BRUSS_GET(u, i, jp1) +
               BRUSS_GET(u, i, jm1) - 4 * uc;
      top[1] = BRUSS_GET(v, im1, j) + BRUSS_GET(v, ip1, j) + BRUSS_GET(v, i, jp1) +
               BRUSS_GET(v, i, jm1) - 4 * vc;
      top[2] = uc;
      top[3] = vc;
      top += 4;
    }
  for (int i = N - 1; i >= 0; i--)
    for (int j = N - 1; j >= 0; j--) {
      BRUSS_NEIGHBOURS
      top -= 4;
      double lapu = top[0], lapv = top[1], uc = top[2], vc = top[3];
      double a = BRUSS_GET(su, i, j), b = BRUSS_GET(sv, i, j);
      BRUSS_GET(su, i, j) = 0;
      BRUSS_GET(sv, i, j) = 0;
      dalpha += a * lapu + b * lapv;
      dB += a;
      dA += (b - a) * uc;
      double ta = alpha * a, tb = alpha * b, w = a - b;
      BRUSS_GET(gu, i, jm1) += ta;
      BRUSS_GET(gu, i, jp1) += ta;
      BRUSS_GET(gu, ip1, j) += ta;
      BRUSS_GET(gu, im1, j) += ta;
      BRUSS_GET(gv, i, jm1) += tb;
      BRUSS_GET(gv, i, jp1) += tb;
      BRUSS_GET(gv, ip1, j) += tb;
      BRUSS_GET(gv, im1, j) += tb;
      BRUSS_GET(gu, i, j) += -4 * ta + 2 * w * uc * vc - (A + 1) * a + A * b;
      BRUSS_GET(gv, i, j) += -4 * tb + w * uc * uc;
    }
  gp[0] += dA;
  gp[1] += dB;
  gp[2] += dalpha * scale;
}

static void bruss_hand_gather(double *__restrict su, double *__restrict sv,
                              const double *__restrict u, const double *__restrict v,
                              const double *__restrict p, double *__restrict gu,
                              double *__restrict gv, double *__restrict gp, int N) {
  double A = p[0], dx = 1.0 / (N - 1), scale = 1.0 / (dx * dx), alpha = p[2] * scale;
  double dA = 0, dB = 0, dalpha = 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      BRUSS_NEIGHBOURS
      double a = BRUSS_GET(su, i, j), b = BRUSS_GET(sv, i, j);
      double uc = BRUSS_GET(u, i, j), vc = BRUSS_GET(v, i, j);
      double lapu = BRUSS_GET(u, im1, j) + BRUSS_GET(u, ip1, j) + BRUSS_GET(u, i, jp1) +
                    BRUSS_GET(u, i, jm1) - 4 * uc;
      double lapv = BRUSS_GET(v, im1, j) + BRUSS_GET(v, ip1, j) + BRUSS_GET(v, i, jp1) +
                    BRUSS_GET(v, i, jm1) - 4 * vc;
      dalpha += a * lapu + b * lapv;
      dB += a;
      dA += (b - a) * uc;
      double lapa = BRUSS_GET(su, im1, j) + BRUSS_GET(su, ip1, j) + BRUSS_GET(su, i, jp1) +
                    BRUSS_GET(su, i, jm1) - 4 * a;
      double lapb = BRUSS_GET(sv, im1, j) + BRUSS_GET(sv, ip1, j) + BRUSS_GET(sv, i, jp1) +
                    BRUSS_GET(sv, i, jm1) - 4 * b;
      double w = a - b;
      BRUSS_GET(gu, i, j) += alpha * lapa + 2 * w * uc * vc - (A + 1) * a + A * b;
      BRUSS_GET(gv, i, j) += alpha * lapb + w * uc * uc;
    }
  gp[0] += dA;
  gp[1] += dB;
  gp[2] += dalpha * scale;
  memset(su, 0, sizeof(double) * N * N);   /* the seeds are consumed, as in the AD variant */
  memset(sv, 0, sizeof(double) * N * N);
}
#undef BRUSS_NEIGHBOURS
#endif
