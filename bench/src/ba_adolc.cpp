/* BA with ADOL-C: per observation, trace the residual block (15 inputs, 2 outputs) and run one
   reverse sweep with two directions (fov_reverse); per weight, trace 1 -> 1 and fos_reverse. */
#include <adolc/adolc.h>
#include <string.h>
#include "adbench_io.h"
#include "ba.h"

int ba_adolc_jacobian(const BAInput *in, double *J) {
  const short tag = 2;
  double U[2][2] = {{1, 0}, {0, 1}};
  double *Up[2] = {U[0], U[1]};
  double Z0[2][15];
  double *Zp[2] = {Z0[0], Z0[1]};
  for (int i = 0; i < in->p; i++) {
    int c = in->obs[2 * i], pt = in->obs[2 * i + 1];
    double y[2];
    trace_on(tag, 1);
    adouble a[15], err[2];
    for (int q = 0; q < 11; q++) a[q] <<= in->cams[c * BA_NCAMPARAMS + q];
    for (int q = 0; q < 3; q++) a[11 + q] <<= in->X[pt * 3 + q];
    a[14] <<= in->w[i];
    ba_compute_reproj_error<adouble>(a, a + 11, a + 14, &in->feats[2 * i], err);
    err[0] >>= y[0];
    err[1] >>= y[1];
    trace_off();
    fov_reverse(tag, 2, 15, 2, Up, Zp);
    memcpy(&J[30 * i], Z0[0], sizeof(double) * 15);
    memcpy(&J[30 * i + 15], Z0[1], sizeof(double) * 15);
  }
  for (int i = 0; i < in->p; i++) {
    double y, one = 1.0;
    trace_on(tag, 1);
    adouble w, err;
    w <<= in->w[i];
    ba_compute_zach_weight_error<adouble>(&w, &err);
    err >>= y;
    trace_off();
    fos_reverse(tag, 1, 1, &one, &J[30 * in->p + i]);
  }
  return 0;
}
