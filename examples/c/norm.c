/* The paper's Figure 1: normalize a vector. The gradient is O(N) because LLVM hoists mag()
   out of the loop before enzyme-cc differentiates. */
#include <math.h>
#include <stdio.h>

#define N 4
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);

static double mag(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return sqrt(s);
}

void norm(double *out, const double *in, int n) {
  for (int i = 0; i < n; i++) out[i] = in[i] / mag(in, n);
}

int main(void) {
  double in[N] = {1, 2, 3, 4}, d_in[N] = {0}, out[N], d_out[N] = {1, 0, 0, 0};
  __enzyme_autodiff((void *)norm, enzyme_dup, out, d_out, enzyme_dup, in, d_in, enzyme_const, N);
  /* d out[0] / d in[j] = delta_0j / m - in[0] in[j] / m^3 */
  double m = mag(in, N);
  for (int j = 0; j < N; j++)
    printf("d out[0]/d in[%d] = %9.6f (exact %9.6f)\n", j, d_in[j], (j == 0) / m - in[0] * in[j] / (m * m * m));
  return 0;
}
