/* FFT benchmark: gradient of f(x) = sum_k |FFT(x)_k|^2 / ((1 + k) n) w.r.t. the 2n inputs.
   usage: fft N [driver options, see bench.h]   (N a power of two) */
#include "bench.h"
#include "variants.h"
#include "fft.h"

#ifndef BENCH_NO_ENZYME
extern "C" { BENCH_DEFINE_MARKERS }
#endif
#ifdef BENCH_HAVE_ADOLC
int fft_adolc_gradient(const double *x, unsigned n, double *G);
#endif

static unsigned n;
static double *x, *work, *dwork, *G;
volatile double fft_sink;

static double eval(void) { return fft_objective<double>(x, work, n); }
static void primal(void) { fft_sink = eval(); }

static int gradient(const char *v) {
#ifndef BENCH_NO_ENZYME
  if (!strcmp(v, "enzyme")) {
    memset(G, 0, sizeof(double) * 2 * n);
    memset(dwork, 0, sizeof(double) * 2 * n);
    __enzyme_autodiff((void *)fft_objective<double>, enzyme_dup, x, G, enzyme_dup, work, dwork,
                      enzyme_const, n);
    return 0;
  }
#endif
#ifdef BENCH_HAVE_ADOLC
  if (!strcmp(v, "adolc")) return fft_adolc_gradient(x, n, G);
#endif
  return 1;
}

static double fd_entry(int i) {
  double v = x[i], h = bench_fd_step(v);
  x[i] = v + h;
  double fp = eval();
  x[i] = v - h;
  double fm = eval();
  x[i] = v;
  return (fp - fm) / (2 * h);
}

int main(int argc, char **argv) {
  if (argc < 2 || atoi(argv[1]) < 1 || (atoi(argv[1]) & (atoi(argv[1]) - 1))) {
    fprintf(stderr, "usage: %s N (a power of two) [--variant V ...]\n", argv[0]);
    return 2;
  }
  n = (unsigned)atoi(argv[1]);
  x = (double *)malloc(sizeof(double) * 2 * n);
  work = (double *)malloc(sizeof(double) * 2 * n);
  dwork = (double *)malloc(sizeof(double) * 2 * n);
  G = (double *)malloc(sizeof(double) * 2 * n);
  unsigned s = 12345;
  for (unsigned i = 0; i < 2 * n; i++) {
    s = s * 1103515245u + 12345u;
    x[i] = ((s >> 8) & 0xffff) / 65536.0 - 0.5;
  }
  bench_t b;
  memset(&b, 0, sizeof b);
  b.name = "fft";
  snprintf(b.input, sizeof b.input, "n=%u", n);
  b.ngrad = 2 * n;
  b.grad = G;
  b.variants = BENCH_VARIANTS("");
  b.primal = primal;
  b.gradient = gradient;
  b.fd_entry = fd_entry;
  b.value = eval;
  return bench_main(argc, argv, &b);
}
