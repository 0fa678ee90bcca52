/* GMM with ADOL-C: trace the objective with adouble (taping is part of every gradient, since the
   tape depends on the input through the maxima of log-sum-exp), then one reverse sweep. */
#include <adolc/adolc.h>
#include "adbench_io.h"
#include "gmm.h"

int gmm_adolc_gradient(const GMMInput *in, double *G) {
  const short tag = 1;
  int np = in->nparams, kd = in->k * in->d;
  trace_on(tag, 1);
  adouble *p = new adouble[np];
  for (int i = 0; i < np; i++) p[i] <<= in->params[i];
  adouble err;
  gmm_objective<adouble>(in->d, in->k, in->n, p, p + in->k, p + in->k + kd, in->x, in->gamma,
                         in->m, &err);
  double y;
  err >>= y;
  delete[] p;
  trace_off();
  double one = 1.0;
  fos_reverse(tag, 1, np, &one, G);
  return 0;
}
