/* LSTM benchmark (ADBench): gradient of the loss w.r.t. the main and extra parameters.
   usage: lstm INPUT.txt [driver options, see bench.h] */
#include "bench.h"
#include "variants.h"
#include "adbench_io.h"
#include "lstm.h"

#ifndef BENCH_NO_ENZYME
extern "C" { BENCH_DEFINE_MARKERS }
#endif
#ifdef BENCH_HAVE_ADOLC
int lstm_adolc_gradient(const LSTMInput *in, double *G);
#endif

static LSTMInput in;
static double *G;
volatile double lstm_sink;

static double eval(void) {
  double loss;
  lstm_objective<double>(in.l, in.c, in.b, in.main_params, in.extra_params, in.state,
                         in.sequence, &loss);
  return loss;
}

static void primal(void) { lstm_sink = eval(); }

static int gradient(const char *v) {
#ifndef BENCH_NO_ENZYME
  if (!strcmp(v, "enzyme")) {
    double loss = 0, dloss = 1.0;
    memset(G, 0, sizeof(double) * (in.nmain + in.nextra));
    __enzyme_autodiff((void *)lstm_objective<double>, enzyme_const, in.l, enzyme_const, in.c,
                      enzyme_const, in.b, enzyme_dup, in.main_params, G, enzyme_dup,
                      in.extra_params, G + in.nmain, enzyme_const, in.state, enzyme_const,
                      in.sequence, enzyme_dupnoneed, &loss, &dloss);
    return 0;
  }
#endif
#ifdef BENCH_HAVE_ADOLC
  if (!strcmp(v, "adolc")) return lstm_adolc_gradient(&in, G);
#endif
  return 1;
}

static double fd_entry(int i) {
  double x = in.params[i], h = bench_fd_step(x);
  in.params[i] = x + h;
  double fp = eval();
  in.params[i] = x - h;
  double fm = eval();
  in.params[i] = x;
  return (fp - fm) / (2 * h);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s INPUT.txt [--variant V ...]\n", argv[0]);
    return 2;
  }
  in = read_lstm(argv[1]);
  G = adb_alloc(in.nmain + in.nextra);
  bench_t b;
  memset(&b, 0, sizeof b);
  b.name = "lstm";
  snprintf(b.input, sizeof b.input, "l=%d c=%d b=%d", in.l, in.c, in.b);
  b.ngrad = in.nmain + in.nextra;
  b.grad = G;
  b.variants = BENCH_VARIANTS("");
  b.primal = primal;
  b.gradient = gradient;
  b.fd_entry = fd_entry;
  b.value = eval;
  return bench_main(argc, argv, &b);
}
