/* Euler / RK4 with ADOL-C: odeint runs on boost::array<adouble, 2>; trace, then one reverse
   sweep with two directions for the 2 x 2 Jacobian. */
#include <adolc/adolc.h>
#include "ode.h"

int ode_adolc_jacobian(int rk4, const double *x0, int steps, double *J) {
  const short tag = 4;
  double y[2];
  trace_on(tag, 1);
  {
    adouble a[2], out[2];
    a[0] <<= x0[0];
    a[1] <<= x0[1];
    if (rk4) ode_final<adouble, ode_rk4<adouble> >(a, out, steps);
    else ode_final<adouble, ode_euler<adouble> >(a, out, steps);
    out[0] >>= y[0];
    out[1] >>= y[1];
  }
  trace_off();
  double U[2][2] = {{1, 0}, {0, 1}}, Z[2][2];
  double *Up[2] = {U[0], U[1]}, *Zp[2] = {Z[0], Z[1]};
  fov_reverse(tag, 2, 2, 2, Up, Zp);
  for (int r = 0; r < 2; r++)
    for (int c = 0; c < 2; c++) J[2 * r + c] = Z[r][c];
  return 0;
}
