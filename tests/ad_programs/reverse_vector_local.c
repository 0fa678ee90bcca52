/* Reverse vector mode over locals that keep their memory after optimization: a time-stepping
   loop whose state and work arrays are fixed-size locals handed to a non-inlined step (as an
   ODE stepper object is), one of two locals picked through a pointer select. Their shadows are
   made by the forward sweep, which runs once for all the lanes: every lane must equal a width-1
   call with the same seed and the central finite difference; forward vs reverse dot-product
   test. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want, double rtol) {
  int ok = fabs(got - want) <= rtol * (1.0 + fabs(want));
  printf("CHECK %s %.15g %.15g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_dupnoneed, enzyme_const, enzyme_width;
void __enzyme_autodiff(void *, ...);
void __enzyme_fwddiff(void *, ...);

/* one explicit midpoint step of x' = (a x - x y, x y - 3 y), k the work array */
__attribute__((noinline)) static void step(double *x, double *k, double h, double a) {
  k[0] = a * x[0] - x[0] * x[1];
  k[1] = x[0] * x[1] - 3 * x[1];
  k[2] = x[0] + 0.5 * h * k[0];
  k[3] = x[1] + 0.5 * h * k[1];
  x[0] += h * (a * k[2] - k[2] * k[3]);
  x[1] += h * (k[2] * k[3] - 3 * k[3]);
}

/* out = final state; in = initial state and the parameter a */
static void run(const double *in, double *out, int n) {
  double x[2], k[4], alt[2];
  x[0] = in[0];
  x[1] = in[1];
  for (int i = 0; i < n; i++)
    step(x, k, 1.0 / n, in[2]);
  alt[0] = 2 * x[1];
  alt[1] = x[0] * x[0];
  double *src = n % 2 ? alt : x;    /* a pointer select between two locals */
  out[0] = src[0] + k[2];
  out[1] = src[1] * k[3];
}

#define NIN 3
#define NOUT 2
int main(void) {
  double in[NIN] = {1.0, 0.8, 1.5}, out[NOUT];
  double seeds[3][NOUT] = {{1, 0}, {0, 1}, {0.5, -2}};
  for (int n = 6; n <= 7; n++) {
    /* width 1, one call per seed: the reference, checked against central differences */
    double ref[3][NIN] = {{0}};
    for (int s = 0; s < 3; s++) {
      double dout[NOUT] = {seeds[s][0], seeds[s][1]};
      __enzyme_autodiff((void *)run, enzyme_dup, in, ref[s], enzyme_dupnoneed, out, dout,
                        enzyme_const, n);
      for (int i = 0; i < NIN; i++) {
        double h = 1e-6, keep = in[i], op[NOUT], om[NOUT];
        in[i] = keep + h;
        run(in, op, n);
        in[i] = keep - h;
        run(in, om, n);
        in[i] = keep;
        double fd = (seeds[s][0] * (op[0] - om[0]) + seeds[s][1] * (op[1] - om[1])) / (2 * h);
        char name[40];
        snprintf(name, sizeof name, "n%d_fd_s%d_in%d", n, s, i);
        check(name, ref[s][i], fd, 1e-7);
      }
    }
    /* width 3: one forward sweep, three reverse sweeps over the same local shadows */
    double d3[3][NIN] = {{0}}, dout3[3][NOUT];
    for (int s = 0; s < 3; s++)
      dout3[s][0] = seeds[s][0], dout3[s][1] = seeds[s][1];
    __enzyme_autodiff((void *)run, enzyme_width, 3, enzyme_dup, in, d3[0], d3[1], d3[2],
                      enzyme_dupnoneed, out, dout3[0], dout3[1], dout3[2], enzyme_const, n);
    for (int s = 0; s < 3; s++)
      for (int i = 0; i < NIN; i++) {
        char name[40];
        snprintf(name, sizeof name, "n%d_w3_l%d_in%d", n, s, i);
        check(name, d3[s][i], ref[s][i], 1e-13);
      }
    /* forward vs reverse: <J v, w> == <v, J^T w> for lanes 0 and 2 */
    double v[2][NIN] = {{0.3, -1.0, 2.0}, {1.0, 0.5, -0.25}}, t[2][NOUT], o2[NOUT];
    __enzyme_fwddiff((void *)run, enzyme_width, 2, enzyme_dup, in, v[0], v[1], enzyme_dupnoneed,
                     o2, t[0], t[1], enzyme_const, n);
    for (int l = 0; l < 2; l++) {
      int s = 2 * l;
      double jv = seeds[s][0] * t[l][0] + seeds[s][1] * t[l][1], vjt = 0;
      for (int i = 0; i < NIN; i++)
        vjt += v[l][i] * d3[s][i];
      char name[40];
      snprintf(name, sizeof name, "n%d_fwd_rev_dot%d", n, l);
      check(name, jv, vjt, 1e-12);
    }
  }
  return failed != 0;
}
