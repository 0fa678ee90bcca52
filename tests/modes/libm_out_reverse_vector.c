/* Reverse vector mode (enzyme_width 2 in __enzyme_autodiff) through sincos and modf writing
   into an array with a shadow: each lane's adjoints equal a width-1 gradient with that lane's
   seeds (which tests/ad_programs/libm_out_params.c checks against central differences), and
   every lane's seeds are consumed (the calls overwrote that memory). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
int enzyme_dup, enzyme_const, enzyme_width;
void __enzyme_autodiff(void *, ...);
__attribute__((no_builtin("modf"))) void arr(const double *x, double *out, int n) {
  for (int i = 0; i < n; i++) {
    sincos(x[i], &out[3 * i], &out[3 * i + 1]);
    out[3 * i] = modf(3.0 * out[3 * i] * x[i] + 5.0, &out[3 * i + 2]);
  }
}
typedef struct { double d[2]; } T2;
T2 ad_t2(void *, ...) __asm__("__enzyme_autodiff");
int main() {
  double x[2] = {0.4, 1.3}, out[6], ref[2][2] = {{0}}, dx[2][2] = {{0}};
  double seeds[2][6] = {{1,2,3,4,5,6},{-1,0.5,2,0,1,3}};
  for (int s = 0; s < 2; s++) { double d[6]; for (int k=0;k<6;k++) d[k]=seeds[s][k]; __enzyme_autodiff((void*)arr, enzyme_dup, x, ref[s], enzyme_dup, out, d, enzyme_const, 2); }
  double d0[6], d1[6]; for (int k=0;k<6;k++) d0[k]=seeds[0][k], d1[k]=seeds[1][k];
  __enzyme_autodiff((void*)arr, enzyme_width, 2, enzyme_dup, x, dx[0], dx[1], enzyme_dup, out, d0, d1, enzyme_const, 2);
  for (int s = 0; s < 2; s++) printf("lane %d: %.12g %.12g | %.12g %.12g\n", s, dx[s][0], dx[s][1], ref[s][0], ref[s][1]);
  double l = 0;
  for (int k = 0; k < 6; k++) l += fabs(d0[k]) + fabs(d1[k]);
  printf("shadows left: %g | 0\n", l);
}
