/* Reverse vector mode: __enzyme_autodiff(f, enzyme_width, N, ...) with N adjoint seeds at once
   (enzyme_dup with N shadows, enzyme_dupv with a byte stride, active floats returning N
   adjoints each). Every lane must equal a width-1 call with the same seed and the central
   finite difference; the primal runs once per call; forward vs reverse dot-product test. */
#include <math.h>
#include <stdio.h>
static int failed;
static void check(const char *name, double got, double want, double rtol) {
  int ok = fabs(got - want) <= rtol * (1.0 + fabs(want));
  printf("CHECK %s %.15g %.15g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_dupv, enzyme_const, enzyme_width, enzyme_out, enzyme_const_return,
    enzyme_noret;
void __enzyme_autodiff(void *, ...);
typedef struct { double dx[2]; double dk[2]; } G2;
G2 __enzyme_autodiff_g2(void *, ...) __asm__("__enzyme_autodiff");
typedef struct { double dx, dk; } G1;
G1 __enzyme_autodiff_g1(void *, ...) __asm__("__enzyme_autodiff");
typedef struct { double d[2]; } T2;
T2 __enzyme_fwddiff(void *, ...);
T2 __enzyme_autodiff_t2(void *, ...) __asm__("__enzyme_autodiff");

#define NX 3
#define NY 2
static int calls;
__attribute__((noinline)) static double weight(double v, int i) { return sin(v) * (i + 1) + v * v; }
static void f(const double *x, double *y, int n) {
  calls++;
  y[0] = 0;
  y[1] = 1;
  for (int i = 0; i < n; i++) {
    y[0] += weight(x[i], i);
    y[1] *= x[i] + 2;
  }
}
double g(double x, double k) { return k * exp(x) * x; }
double fy(double x, double *y) { *y = x * x; return sin(x); }

int main(void) {
  double x[NX] = {0.3, -0.4, 1.1}, y[NY];
  double seeds[4][NY] = {{1, 0}, {0, 1}, {2, -1}, {0.5, 0.25}};
  /* width 1, one call per seed: the reference */
  double ref[4][NX] = {{0}};
  for (int s = 0; s < 4; s++) {
    double dy[NY] = {seeds[s][0], seeds[s][1]};
    __enzyme_autodiff((void *)f, enzyme_dup, x, ref[s], enzyme_dup, y, dy, enzyme_const, NX);
  }
  /* central differences of <seed, y> */
  double h = 1e-6;
  for (int s = 0; s < 4; s++)
    for (int i = 0; i < NX; i++) {
      double keep = x[i], yp[NY], ym[NY];
      x[i] = keep + h;
      f(x, yp, NX);
      x[i] = keep - h;
      f(x, ym, NX);
      x[i] = keep;
      double fd = (seeds[s][0] * (yp[0] - ym[0]) + seeds[s][1] * (yp[1] - ym[1])) / (2 * h);
      char name[32];
      snprintf(name, sizeof name, "fd_s%d_x%d", s, i);
      check(name, ref[s][i], fd, 1e-7);
    }
  /* width 2, enzyme_dup with two shadows each */
  double dx2[2][NX] = {{0}}, dy2[2][NY] = {{1, 0}, {0, 1}};
  calls = 0;
  __enzyme_autodiff((void *)f, enzyme_width, 2, enzyme_dup, x, dx2[0], dx2[1], enzyme_dup, y,
                    dy2[0], dy2[1], enzyme_const, NX);
  check("w2_primal_once", calls, 1, 0);
  check("w2_y0", y[0], weight(x[0], 0) + weight(x[1], 1) + weight(x[2], 2), 1e-14);
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < NX; i++) {
      char name[32];
      snprintf(name, sizeof name, "w2_l%d_x%d", s, i);
      check(name, dx2[s][i], ref[s][i], 1e-14);
      snprintf(name, sizeof name, "w2_l%d_dy%d", s, 0);
    }
  check("w2_dy_reset", dy2[0][0] + dy2[1][1], 0.0, 0);
  /* width 4, enzyme_dupv: lane k's shadow k * stride bytes after the first */
  double dx4[4][NX] = {{0}}, dy4[4][NY];
  for (int s = 0; s < 4; s++)
    dy4[s][0] = seeds[s][0], dy4[s][1] = seeds[s][1];
  __enzyme_autodiff((void *)f, enzyme_width, 4, enzyme_dupv, (long)sizeof(dx4[0]), x, dx4,
                    enzyme_dupv, (long)sizeof(dy4[0]), y, dy4, enzyme_const, NX);
  for (int s = 0; s < 4; s++)
    for (int i = 0; i < NX; i++) {
      char name[32];
      snprintf(name, sizeof name, "w4_l%d_x%d", s, i);
      check(name, dx4[s][i], ref[s][i], 1e-14);
    }
  /* forward vs reverse: <J v, w> == <v, J^T w> for lanes 2 and 3 of the width-4 call */
  double v[2][NX] = {{0.3, -1.0, 2.0}, {1.0, 0.5, -0.25}}, ty[2][NY], yy[NY];
  __enzyme_fwddiff((void *)f, enzyme_width, 2, enzyme_dup, x, v[0], v[1], enzyme_dup, yy, ty[0],
                   ty[1], enzyme_const, NX);
  for (int s = 0; s < 2; s++) {
    double jv = seeds[2 + s][0] * ty[s][0] + seeds[2 + s][1] * ty[s][1], vjt = 0;
    for (int i = 0; i < NX; i++)
      vjt += v[s][i] * dx4[2 + s][i];
    char name[32];
    snprintf(name, sizeof name, "fwd_rev_dot%d", s);
    check(name, jv, vjt, 1e-13);
  }
  /* active floats: a float result is seeded 1.0 in every lane */
  G1 one = __enzyme_autodiff_g1((void *)g, 0.7, 1.3);
  G2 two = __enzyme_autodiff_g2((void *)g, enzyme_width, 2, 0.7, 1.3);
  check("g_dx", one.dx, 1.3 * exp(0.7) * 1.7, 1e-14);
  check("g_dk", one.dk, exp(0.7) * 0.7, 1e-14);
  for (int l = 0; l < 2; l++) {
    check(l ? "g_w2_dx1" : "g_w2_dx0", two.dx[l], one.dx, 1e-14);
    check(l ? "g_w2_dk1" : "g_w2_dk0", two.dk[l], one.dk, 1e-14);
  }
  /* return options with a width: the result unseeded (enzyme_const_return) or seeded 1.0 in
     every lane (enzyme_noret: the primal result is not returned) */
  double yv, dl[2] = {1, 3};
  T2 c = __enzyme_autodiff_t2((void *)fy, enzyme_const_return, enzyme_width, 2, 0.5, enzyme_dup,
                              &yv, &dl[0], &dl[1]);
  check("const_return_l0", c.d[0], 2 * 0.5 * 1, 1e-14);
  check("const_return_l1", c.d[1], 2 * 0.5 * 3, 1e-14);
  dl[0] = 1, dl[1] = 3;
  c = __enzyme_autodiff_t2((void *)fy, enzyme_noret, enzyme_width, 2, 0.5, enzyme_dup, &yv, &dl[0],
                           &dl[1]);
  check("noret_l0", c.d[0], 1 + cos(0.5), 1e-14);
  check("noret_l1", c.d[1], 3 + cos(0.5), 1e-14);
  return failed != 0;
}
