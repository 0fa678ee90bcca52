/* Brusselator adjoint with ADOL-C: trace the right-hand side (2 N^2 + 3 inputs, 2 N^2 outputs),
   then one reverse sweep with the seeds as weights (fos_reverse). */
#include <adolc/adolc.h>
#include <string.h>
#include "bruss.h"

int bruss_adolc_adjoint(const double *x, const double *lu, const double *lv, double t, int N,
                        double *G) {
  const short tag = 6;
  int nn = N * N, nin = 2 * nn + 3;
  double *y = new double[2 * nn];
  double *w = new double[2 * nn];
  memcpy(w, lu, sizeof(double) * nn);
  memcpy(w + nn, lv, sizeof(double) * nn);
  trace_on(tag, 1);
  {
    adouble *a = new adouble[nin];
    adouble *out = new adouble[2 * nn];
    for (int i = 0; i < nin; i++) a[i] <<= x[i];
    brusselator_2d_loop<adouble>(out, out + nn, a, a + nn, a + 2 * nn, t, N);
    for (int i = 0; i < 2 * nn; i++) out[i] >>= y[i];
    delete[] out;
    delete[] a;
  }
  trace_off();
  fos_reverse(tag, 2 * nn, nin, w, G);
  delete[] y;
  delete[] w;
  return 0;
}
