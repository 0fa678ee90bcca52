/* FFT with ADOL-C: trace f with adouble inputs, then one reverse sweep. */
#include <adolc/adolc.h>
#include "fft.h"

int fft_adolc_gradient(const double *x, unsigned n, double *G) {
  const short tag = 5;
  double y;
  trace_on(tag, 1);
  {
    adouble *a = new adouble[2 * n];
    adouble *work = new adouble[2 * n];
    for (unsigned i = 0; i < 2 * n; i++) a[i] <<= x[i];
    adouble f = fft_objective<adouble>(a, work, n);
    f >>= y;
    delete[] work;
    delete[] a;
  }
  trace_off();
  double one = 1.0;
  fos_reverse(tag, 1, 2 * n, &one, G);
  return 0;
}
