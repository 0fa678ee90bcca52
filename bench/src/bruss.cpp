/* Brusselator benchmark: the adjoint (vector-Jacobian product) of the right-hand side: given
   seeds lu, lv for (du, dv), the gradient of <lu, du> + <lv, dv> w.r.t. u (N^2), v (N^2) and
   p (3), laid out G = gu | gv | gp.   usage: bruss N [driver options, see bench.h] */
#include "bench.h"
#include "variants.h"
#include "bruss.h"
#include "bruss_hand.h"

#ifndef BENCH_NO_ENZYME
extern "C" { BENCH_DEFINE_MARKERS }
#endif
#ifdef BENCH_HAVE_ADOLC
int bruss_adolc_adjoint(const double *x, const double *lu, const double *lv, double t, int N,
                        double *G);
#endif

static int N;
static double t = 2.0;
static double *x;          /* u | v | p */
static double *du, *dv, *lu, *lv, *su, *sv, *G;
volatile double bruss_sink;

static void rhs(void) { brusselator_2d_loop<double>(du, dv, x, x + N * N, x + 2 * N * N, t, N); }
static void primal(void) {
  rhs();
  bruss_sink = du[0];
}

static int gradient(const char *v) {
  int nn = N * N;
#ifndef BENCH_NO_ENZYME
  if (!strcmp(v, "enzyme")) {
    memset(G, 0, sizeof(double) * (2 * nn + 3));
    memcpy(su, lu, sizeof(double) * nn);   /* the reverse pass consumes the output seeds */
    memcpy(sv, lv, sizeof(double) * nn);
    __enzyme_autodiff((void *)brusselator_2d_loop<double>, enzyme_dupnoneed, du, su,
                      enzyme_dupnoneed, dv, sv, enzyme_dup, x, G, enzyme_dup, x + nn, G + nn,
                      enzyme_dup, x + 2 * nn, G + 2 * nn, enzyme_const, t, enzyme_const, N);
    return 0;
  }
#endif
#ifdef BENCH_HAVE_ADOLC
  if (!strcmp(v, "adolc")) return bruss_adolc_adjoint(x, lu, lv, t, N, G);
#endif
  /* hand-written adjoints (bruss_hand.h), called like the enzyme variant */
  void (*hand)(double *, double *, const double *, const double *, const double *, double *,
               double *, double *, int) =
      !strcmp(v, "hand-scatter") ? bruss_hand_scatter
      : !strcmp(v, "hand-taped") ? bruss_hand_taped
      : !strcmp(v, "hand-gather") ? bruss_hand_gather : NULL;
  if (hand) {
    memset(G, 0, sizeof(double) * (2 * nn + 3));
    memcpy(su, lu, sizeof(double) * nn);
    memcpy(sv, lv, sizeof(double) * nn);
    hand(su, sv, x, x + nn, x + 2 * nn, G, G + nn, G + 2 * nn, N);
    return 0;
  }
  return 1;
}

static double objective(void) {
  rhs();
  double s = 0;
  for (int i = 0; i < N * N; i++) s += lu[i] * du[i] + lv[i] * dv[i];
  return s;
}

static double fd_entry(int i) {
  double v = x[i], h = bench_fd_step(v);
  x[i] = v + h;
  double fp = objective();
  x[i] = v - h;
  double fm = objective();
  x[i] = v;
  return (fp - fm) / (2 * h);
}

int main(int argc, char **argv) {
  if (argc < 2 || atoi(argv[1]) < 3) {
    fprintf(stderr, "usage: %s N [--variant V ...]\n", argv[0]);
    return 2;
  }
  N = atoi(argv[1]);
  int nn = N * N;
  x = (double *)malloc(sizeof(double) * (2 * nn + 3));
  du = (double *)malloc(sizeof(double) * nn);
  dv = (double *)malloc(sizeof(double) * nn);
  lu = (double *)malloc(sizeof(double) * nn);
  lv = (double *)malloc(sizeof(double) * nn);
  su = (double *)malloc(sizeof(double) * nn);
  sv = (double *)malloc(sizeof(double) * nn);
  G = (double *)malloc(sizeof(double) * (2 * nn + 3));
  /* initial condition of the DiffEqBenchmarks problem, seeds pseudo-random */
  double dx = 1.0 / (N - 1);
  unsigned s = 4321;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      double xx = dx * i, yy = dx * j;
      x[N * i + j] = 22 * pow(yy * (1 - yy), 1.5);
      x[nn + N * i + j] = 27 * pow(xx * (1 - xx), 1.5);
    }
  for (int i = 0; i < nn; i++) {
    s = s * 1103515245u + 12345u;
    lu[i] = ((s >> 8) & 0xffff) / 65536.0 - 0.5;
    s = s * 1103515245u + 12345u;
    lv[i] = ((s >> 8) & 0xffff) / 65536.0 - 0.5;
  }
  x[2 * nn + 0] = 3.4;  /* A */
  x[2 * nn + 1] = 1.0;  /* B */
  x[2 * nn + 2] = 10.0; /* alpha */
  bench_t b;
  memset(&b, 0, sizeof b);
  b.name = "bruss";
  snprintf(b.input, sizeof b.input, "N=%d", N);
  b.ngrad = 2 * nn + 3;
  b.grad = G;
  b.variants = BENCH_VARIANTS("hand-scatter,hand-taped,hand-gather");
  b.primal = primal;
  b.gradient = gradient;
  b.fd_entry = fd_entry;
  b.value = objective;
  return bench_main(argc, argv, &b);
}
