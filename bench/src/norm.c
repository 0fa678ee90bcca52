/* The paper's Figure 1: norm() normalizes a vector, calling mag() in the loop. The loop is O(N^2)
   as written; LICM hoists the call to mag (readonly, and the arrays are restrict) and makes it
   O(N). Differentiating after optimization keeps the gradient O(N); differentiating first (Ref)
   leaves the adjoint of mag inside the loop: O(N^2).
   The gradient: of sum_i out[i] w.r.t. in.   usage: norm N [driver options, see bench.h] */
#include "bench.h"
#include "variants.h"

#ifndef BENCH_NO_ENZYME
BENCH_DEFINE_MARKERS
#endif

__attribute__((noinline)) static double mag(const double *__restrict x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return sqrt(s);
}

void norm(double *__restrict out, const double *__restrict in, int n) {
  for (int i = 0; i < n; i++) out[i] = in[i] / mag(in, n);
}

static int n;
static double *in, *out, *dout, *G;
volatile double norm_sink;

static void primal(void) {
  norm(out, in, n);
  norm_sink = out[0];
}

static int gradient(const char *v) {
#ifndef BENCH_NO_ENZYME
  if (!strcmp(v, "enzyme")) {
    for (int i = 0; i < n; i++) dout[i] = 1.0;
    memset(G, 0, sizeof(double) * n);
    __enzyme_autodiff((void *)norm, enzyme_dupnoneed, out, dout, enzyme_dup, in, G, enzyme_const,
                      n);
    return 0;
  }
#endif
  (void)v;
  return 1;
}

static double sum_out(void) {
  norm(out, in, n);
  double s = 0;
  for (int i = 0; i < n; i++) s += out[i];
  return s;
}

static double fd_entry(int i) {
  double x = in[i], h = bench_fd_step(x);
  in[i] = x + h;
  double fp = sum_out();
  in[i] = x - h;
  double fm = sum_out();
  in[i] = x;
  return (fp - fm) / (2 * h);
}

int main(int argc, char **argv) {
  if (argc < 2 || atoi(argv[1]) < 1) {
    fprintf(stderr, "usage: %s N [--variant V ...]\n", argv[0]);
    return 2;
  }
  n = atoi(argv[1]);
  in = (double *)malloc(sizeof(double) * n);
  out = (double *)malloc(sizeof(double) * n);
  dout = (double *)malloc(sizeof(double) * n);
  G = (double *)malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) in[i] = 1.0 + (i % 7) * 0.25;
  bench_t b;
  memset(&b, 0, sizeof b);
  b.name = "norm";
  snprintf(b.input, sizeof b.input, "N=%d", n);
  b.ngrad = n;
  b.grad = G;
  b.variants = BENCH_V_ENZYME "";
  b.primal = primal;
  b.gradient = gradient;
  b.fd_entry = fd_entry;
  b.value = sum_out;
  return bench_main(argc, argv, &b);
}
