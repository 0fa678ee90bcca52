/* LSTM with ADOL-C: trace the loss with adouble parameters, then one reverse sweep. */
#include <adolc/adolc.h>
#include "adbench_io.h"
#include "lstm.h"

int lstm_adolc_gradient(const LSTMInput *in, double *G) {
  const short tag = 3;
  int np = in->nmain + in->nextra;
  trace_on(tag, 1);
  adouble *p = new adouble[np];
  for (int i = 0; i < np; i++) p[i] <<= in->params[i];
  adouble loss;
  lstm_objective<adouble>(in->l, in->c, in->b, p, p + in->nmain, in->state, in->sequence, &loss);
  double y;
  loss >>= y;
  delete[] p;
  trace_off();
  double one = 1.0;
  fos_reverse(tag, 1, np, &one, G);
  return 0;
}
