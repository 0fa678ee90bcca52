/* Right-hand side of the 2-D Brusselator reaction-diffusion system discretized by finite
 * differences on an N x N periodic grid, as in Enzyme's bruss benchmark (after DiffEqBenchmarks):
 *   du = alpha/dx^2 * laplacian(u) + B + u^2 v - (A + 1) u + f(x, y, t)
 *   dv = alpha/dx^2 * laplacian(v) + A u - u^2 v
 * with p = (A, B, alpha) and a forcing f that is 5 inside a disc for t >= 1.1. */
#ifndef BENCH_BRUSS_H
#define BENCH_BRUSS_H

#define BRUSS_GET(x, i, j) (x)[N * (i) + (j)]

static double bruss_f(double x, double y, double t) {
  bool eq1 = ((x - 0.3) * (x - 0.3) + (y - 0.6) * (y - 0.6)) <= 0.1 * 0.1;
  bool eq2 = t >= 1.1;
  return eq1 && eq2 ? 5.0 : 0.0;
}

template <class T>
void brusselator_2d_loop(T *__restrict du, T *__restrict dv, const T *__restrict u,
                         const T *__restrict v, const T *__restrict p, double t, int N) {
  T A = p[0];
  T B = p[1];
  T alpha = p[2];
  double dx = 1.0 / (N - 1);
  alpha = alpha / (dx * dx);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      double x = dx * i, y = dx * j;
      int ip1 = (i == N - 1) ? 0 : i + 1;
      int im1 = (i == 0) ? N - 1 : i - 1;
      int jp1 = (j == N - 1) ? 0 : j + 1;
      int jm1 = (j == 0) ? N - 1 : j - 1;
      T u2v = BRUSS_GET(u, i, j) * BRUSS_GET(u, i, j) * BRUSS_GET(v, i, j);
      BRUSS_GET(du, i, j) = alpha * (BRUSS_GET(u, im1, j) + BRUSS_GET(u, ip1, j) +
                                     BRUSS_GET(u, i, jp1) + BRUSS_GET(u, i, jm1) -
                                     4 * BRUSS_GET(u, i, j)) +
                            B + u2v - (A + 1) * BRUSS_GET(u, i, j) + bruss_f(x, y, t);
      BRUSS_GET(dv, i, j) = alpha * (BRUSS_GET(v, im1, j) + BRUSS_GET(v, ip1, j) +
                                     BRUSS_GET(v, i, jp1) + BRUSS_GET(v, i, jm1) -
                                     4 * BRUSS_GET(v, i, j)) +
                            A * BRUSS_GET(u, i, j) - u2v;
    }
}
#endif
