/* BA benchmark (ADBench): the sparse Jacobian of all residuals, computed as ADBench does with one
   reverse sweep per residual: two per observation (the reprojection error's x and y, each
   depending on 11 camera parameters, 3 point coordinates and the weight) and one per weight error.
   The gradient vector of the check is the list of Jacobian values: for observation k,
   J[30k + 15r + q] = d err_r / d (cam(11) | X(3) | w(1))_q; then J[30p + k] = d werr_k / d w_k.
   Variant "enzyme-rev2": both rows of an observation's block in one __enzyme_autodiff call with
   enzyme_width 2 (one forward sweep, one reverse sweep carrying both rows' adjoints).
   usage: ba INPUT.txt [driver options, see bench.h] */
#include "bench.h"
#include "variants.h"
#include "adbench_io.h"
#include "ba.h"

#ifndef BENCH_NO_ENZYME
extern "C" { BENCH_DEFINE_MARKERS int enzyme_width; }
#endif
#ifdef BENCH_HAVE_ADOLC
int ba_adolc_jacobian(const BAInput *in, double *J);
#endif

static BAInput in;
static double *J, *reproj_err, *w_err;
volatile double ba_sink;

static void primal(void) {
  for (int i = 0; i < in.p; i++) {
    int c = in.obs[2 * i], pt = in.obs[2 * i + 1];
    ba_compute_reproj_error<double>(&in.cams[c * BA_NCAMPARAMS], &in.X[pt * 3], &in.w[i],
                                    &in.feats[2 * i], &reproj_err[2 * i]);
  }
  for (int i = 0; i < in.p; i++) ba_compute_zach_weight_error<double>(&in.w[i], &w_err[i]);
  ba_sink = reproj_err[0] + w_err[0];
}

#ifndef BENCH_NO_ENZYME
static void enzyme_jacobian(void) {
  for (int i = 0; i < in.p; i++) {
    int c = in.obs[2 * i], pt = in.obs[2 * i + 1];
    double *row = &J[30 * i];
    memset(row, 0, sizeof(double) * 30);
    for (int r = 0; r < 2; r++) {
      double err[2], derr[2] = {0, 0};
      derr[r] = 1.0;
      double *g = row + 15 * r;
      __enzyme_autodiff((void *)ba_compute_reproj_error<double>, enzyme_dup,
                        &in.cams[c * BA_NCAMPARAMS], g, enzyme_dup, &in.X[pt * 3], g + 11,
                        enzyme_dup, &in.w[i], g + 14, enzyme_const, &in.feats[2 * i],
                        enzyme_dupnoneed, err, derr);
    }
  }
  for (int i = 0; i < in.p; i++) {
    double err, derr = 1.0;
    J[30 * in.p + i] = 0;
    __enzyme_autodiff((void *)ba_compute_zach_weight_error<double>, enzyme_dup, &in.w[i],
                      &J[30 * in.p + i], enzyme_dupnoneed, &err, &derr);
  }
}

static void enzyme_jacobian_rev2(void) {
  for (int i = 0; i < in.p; i++) {
    int c = in.obs[2 * i], pt = in.obs[2 * i + 1];
    double *g0 = &J[30 * i], *g1 = g0 + 15;
    memset(g0, 0, sizeof(double) * 30);
    double err[2], d0[2] = {1, 0}, d1[2] = {0, 1};
    __enzyme_autodiff((void *)ba_compute_reproj_error<double>, enzyme_width, 2, enzyme_dup,
                      &in.cams[c * BA_NCAMPARAMS], g0, g1, enzyme_dup, &in.X[pt * 3], g0 + 11,
                      g1 + 11, enzyme_dup, &in.w[i], g0 + 14, g1 + 14, enzyme_const,
                      &in.feats[2 * i], enzyme_dupnoneed, err, d0, d1);
  }
  for (int i = 0; i < in.p; i++) {
    double err, derr = 1.0;
    J[30 * in.p + i] = 0;
    __enzyme_autodiff((void *)ba_compute_zach_weight_error<double>, enzyme_dup, &in.w[i],
                      &J[30 * in.p + i], enzyme_dupnoneed, &err, &derr);
  }
}
#endif

static int gradient(const char *v) {
#ifndef BENCH_NO_ENZYME
  if (!strcmp(v, "enzyme")) { enzyme_jacobian(); return 0; }
#ifndef BENCH_NO_REVERSE_VECTOR
  if (!strcmp(v, "enzyme-rev2")) { enzyme_jacobian_rev2(); return 0; }
#endif
#endif
#ifdef BENCH_HAVE_ADOLC
  if (!strcmp(v, "adolc")) return ba_adolc_jacobian(&in, J);
#endif
  return 1;
}

/* one Jacobian entry by central differences on the residual block it belongs to */
static double value(void) {
  primal();
  double s = 0;
  for (int i = 0; i < 2 * in.p; i++) s += reproj_err[i];
  for (int i = 0; i < in.p; i++) s += w_err[i];
  return s;
}

static double fd_entry(int idx) {
  if (idx >= 30 * in.p) {
    int k = idx - 30 * in.p;
    double w = in.w[k], h = bench_fd_step(w), ep, em;
    double wp = w + h, wm = w - h;
    ba_compute_zach_weight_error<double>(&wp, &ep);
    ba_compute_zach_weight_error<double>(&wm, &em);
    return (ep - em) / (2 * h);
  }
  int k = idx / 30, r = (idx % 30) / 15, q = idx % 15;
  int c = in.obs[2 * k], pt = in.obs[2 * k + 1];
  double block[15];
  memcpy(block, &in.cams[c * BA_NCAMPARAMS], sizeof(double) * 11);
  memcpy(block + 11, &in.X[pt * 3], sizeof(double) * 3);
  block[14] = in.w[k];
  double x = block[q], h = bench_fd_step(x), ep[2], em[2];
  block[q] = x + h;
  ba_compute_reproj_error<double>(block, block + 11, block + 14, &in.feats[2 * k], ep);
  block[q] = x - h;
  ba_compute_reproj_error<double>(block, block + 11, block + 14, &in.feats[2 * k], em);
  return (ep[r] - em[r]) / (2 * h);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s INPUT.txt [--variant V ...]\n", argv[0]);
    return 2;
  }
  in = read_ba(argv[1]);
  J = adb_alloc((size_t)31 * in.p);
  reproj_err = adb_alloc((size_t)2 * in.p);
  w_err = adb_alloc(in.p);
  bench_t b;
  memset(&b, 0, sizeof b);
  b.name = "ba";
  snprintf(b.input, sizeof b.input, "n=%d m=%d p=%d", in.n, in.m, in.p);
  b.ngrad = 31 * in.p;
  b.grad = J;
#if !defined(BENCH_NO_ENZYME) && !defined(BENCH_NO_REVERSE_VECTOR)
  b.variants = BENCH_VARIANTS("enzyme-rev2,");
#else
  b.variants = BENCH_VARIANTS("");
#endif
  b.primal = primal;
  b.gradient = gradient;
  b.fd_entry = fd_entry;
  b.value = value;
  return bench_main(argc, argv, &b);
}
