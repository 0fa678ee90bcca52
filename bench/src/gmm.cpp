/* GMM benchmark (ADBench): gradient of the objective w.r.t. alphas, means and icf.
   usage: gmm INPUT.txt [driver options, see bench.h] */
#include "bench.h"
#include "variants.h"
#include "adbench_io.h"
#include "gmm.h"

#ifndef BENCH_NO_ENZYME
extern "C" { BENCH_DEFINE_MARKERS }
#endif
#ifdef BENCH_HAVE_ADOLC
int gmm_adolc_gradient(const GMMInput *in, double *G);
#endif


static GMMInput in;
static double *G;
volatile double gmm_sink;

static double eval(void) {
  double err;
  gmm_objective<double>(in.d, in.k, in.n, in.alphas, in.means, in.icf, in.x, in.gamma, in.m, &err);
  return err;
}

static void primal(void) { gmm_sink = eval(); }

static int gradient(const char *v) {
  int kd = in.k * in.d;
#ifndef BENCH_NO_ENZYME
  if (!strcmp(v, "enzyme")) {
    double err = 0, derr = 1.0;
    memset(G, 0, sizeof(double) * in.nparams);
    __enzyme_autodiff((void *)gmm_objective<double>, enzyme_const, in.d, enzyme_const, in.k,
                      enzyme_const, in.n, enzyme_dup, in.alphas, G, enzyme_dup, in.means, G + in.k,
                      enzyme_dup, in.icf, G + in.k + kd, enzyme_const, in.x, enzyme_const,
                      in.gamma, enzyme_const, in.m, enzyme_dupnoneed, &err, &derr);
    return 0;
  }
#endif
#ifdef BENCH_HAVE_ADOLC
  if (!strcmp(v, "adolc")) return gmm_adolc_gradient(&in, G);
#endif
  (void)kd;
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
  in = read_gmm(argv[1]);
  G = adb_alloc(in.nparams);
  bench_t b;
  memset(&b, 0, sizeof b);
  b.name = "gmm";
  snprintf(b.input, sizeof b.input, "d=%d K=%d n=%d", in.d, in.k, in.n);
  b.ngrad = in.nparams;
  b.grad = G;
  b.variants = BENCH_VARIANTS("");
  b.primal = primal;
  b.gradient = gradient;
  b.fd_entry = fd_entry;
  b.value = eval;
  return bench_main(argc, argv, &b);
}
