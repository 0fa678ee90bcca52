/* ADOL-C peer of the serial hydrodynamics benchmark (bench/hydro.py): the same kernel
   (hydro_kernel.h) with real = adouble, taped on every gradient (its branches, clamps and dt
   minimum depend on the input), then one reverse sweep (fos_reverse). Our own code.

     hydro_adolc N STEPS REPS CHECK      (as hydro.c; CHECK = 1 compares with central
                                          differences of the double kernel) */
#include <adolc/adolc.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <algorithm>
#include "hydro_mesh.h"

namespace pd {
typedef double real;
#include "hydro_kernel.h"
}
namespace ad {
typedef adouble real;
#define HYDRO_NO_SETUP
#include "hydro_kernel.h"
#undef HYDRO_NO_SETUP
}

static double now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
static double peak_mib() {
  rusage r;
  getrusage(RUSAGE_SELF, &r);
  return r.ru_maxrss / 1024.0;
}

/* gradient w.r.t. e0 (ne) then v0 (3 nn) in g */
static void adolc_gradient(const Mesh *m, const double *x, double *g, int steps) {
  const short tag = 3;
  int nin = m->ne + 3 * m->nn;
  double y, w = 1.0;
  trace_on(tag, 1);
  {
    adouble *a = new adouble[nin];
    for (int i = 0; i < nin; i++) a[i] <<= x[i];
    adouble obj = ad::hydro_run(m, a, a + m->ne, steps);
    obj >>= y;
    delete[] a;
  }
  trace_off();
  fos_reverse(tag, 1, nin, &w, g);
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s N STEPS REPS CHECK\n", argv[0]);
    return 2;
  }
  int n = atoi(argv[1]), steps = atoi(argv[2]), reps = atoi(argv[3]), chk = atoi(argv[4]);
  Mesh m;
  hydro_mesh(&m, n, n, 0, 0, 1);
  pd::hydro_masses(&m);
  int nin = m.ne + 3 * m.nn;
  double *x = new double[nin], *g = new double[nin];
  hydro_init(&m, x, x + m.ne);
  if (chk) {
    adolc_gradient(&m, x, g, steps);
    double scale = 0, worst = 0;
    for (int i = 0; i < m.ne; i++) scale = std::max(scale, fabs(g[i]));
    int bad = 0, N = n + 1, NN = N * N * N;
    int ids[6] = {0, n * n * n / 3 + 1, n * n * n - 1, m.ne + N * N * (n / 2) + N + 1,
                  m.ne + NN + N * N * (n / 2) + N * (n / 2) + 1, m.ne + 2 * NN + NN - 1};
    for (int t = 0; t < 6; t++) {
      int i = ids[t];
      double x0 = x[i], h = 1e-5;
      x[i] = x0 + h;
      double fp = pd::hydro_run(&m, x, x + m.ne, steps);
      x[i] = x0 - h;
      double fm = pd::hydro_run(&m, x, x + m.ne, steps);
      x[i] = x0;
      double fd = (fp - fm) / (2 * h), err = fabs(g[i] - fd) / std::max(fabs(fd), 1e-3 * scale);
      worst = std::max(worst, err);
      printf("%s[%d] ADOL-C %.10g FD %.10g rel. error %.2g\n", i < m.ne ? "e0" : "v0",
             i < m.ne ? i : i - m.ne, g[i], fd, err);
      if (err > 1e-5) bad = 1;
    }
    printf(bad ? "check failed (max rel. error %.3g)\n" : "check passed (max rel. error %.3g)\n",
           worst);
    return bad;
  }
  double tp[64], tg[64];
  volatile double sink = 0;
  for (int r = 0; r < reps && r < 64; r++) {
    double t0 = now();
    sink += pd::hydro_run(&m, x, x + m.ne, steps);
    tp[r] = now() - t0;
  }
  double rss_primal = peak_mib();
  for (int r = 0; r < reps && r < 64; r++) {
    double t0 = now();
    adolc_gradient(&m, x, g, steps);
    tg[r] = now() - t0;
  }
  std::sort(tp, tp + reps);
  std::sort(tg, tg + reps);
  printf("primal %.6g gradient %.6g rss_primal %.1f rss %.1f\n", tp[reps / 2], tg[reps / 2],
         rss_primal, peak_mib());
  hydro_free(&m);
  delete[] x;
  delete[] g;
  return 0;
}
