/* Reverse vector mode whose lanes run side by side in one reverse sweep (ad/api/lane_fusion.py):
   a time loop carrying adjoints in registers, a branch on primal data, a non-inlined callee
   handed the lanes' shadows (its reverse fused too), a recursive callee, a float, width 3; a
   memcpy between the lanes' arrays (its adjoint per lane) and an overlapping memmove (its
   adjoint's temporary buffer per lane).
   Every lane must equal a width-1 call with the same seed and the central finite difference. */
#include <math.h>
#include <stdio.h>
#include <string.h>
static int failed;
static void check(const char *name, double got, double want, double rtol) {
  int ok = fabs(got - want) <= rtol * (1.0 + fabs(want));
  printf("CHECK %s %.15g %.15g%s\n", name, got, want, ok ? "" : "  <-- FAILED");
  failed += !ok;
}
int enzyme_dup, enzyme_dupnoneed, enzyme_const, enzyme_width;
void __enzyme_autodiff(void *, ...);
void __enzyme_fwddiff(void *, ...);
typedef struct { float dx[3], dy[3]; } F3;
F3 __enzyme_autodiff_f3(void *, ...) __asm__("__enzyme_autodiff");

/* a last stage, in place in the caller's array (kept out of line: its reverse gets the lanes'
   shadows of that array) */
__attribute__((noinline)) static void stage(double *s, double h) {
  double k0 = s[0] + h * (s[0] * s[1] - 0.5 * s[0]);
  double k1 = s[1] + h * (s[0] - s[1] * s[2]);
  double k2 = s[2] + h * sin(s[0] * s[2]);
  s[0] = k0;
  s[1] = k1 * k2;
  s[2] = k2;
}

/* a recursive sum of powers: its reverse calls itself */
__attribute__((noinline)) static double powsum(const double *v, int n) {
  return n == 0 ? 0.0 : v[n - 1] * v[n - 1] * v[n - 1] + powsum(v, n - 1);
}

static volatile int shift = 1;   /* keeps the memmove a call: its adjoint's temporary per lane */

/* three states, n steps; out = final state and a power sum of the start */
static void run(const double *in, double *out, int n) {
  double a = in[0], b = in[1], c = in[2];
  for (int i = 0; i < n; i++) {
    double na = a + 0.01 * (a * b - c), nb = b + 0.01 * exp(-a * a), nc = c;
    if (a > b)                                   /* a branch on primal values */
      nc = c + 0.01 * a * c;
    else
      nc = c - 0.02 * b;
    a = na, b = nb, c = nc;
  }
  out[0] = a;
  out[1] = b;
  out[2] = c;
  stage(out, 0.1);
  memmove(out + 1, out, shift * sizeof(double));   /* out[1] = out[0], overlapping */
  out[2] += powsum(in, 3);
}

/* a copy of the input, then an update in place (kept out of line) */
__attribute__((noinline)) static void copy_mix(const double *x, double *out, int n) {
  memcpy(out, x, n * sizeof(double));
  for (int i = 0; i < n; i++)
    out[i] = sin(out[i]) * x[(i + 1) % n];
}

static float fl(float x, float y) { return sinf(x) * y + x * x * y; }

#define N 3
int main(void) {
  double in[N] = {0.9, 1.2, 0.4}, out[N];
  double seeds[3][N] = {{1, 0, 0}, {0, 1, 0}, {0.5, -1, 2}};
  for (int steps = 40; steps <= 41; steps++) {
    double ref[3][N] = {{0}};
    for (int l = 0; l < 3; l++) {
      double dout[N] = {seeds[l][0], seeds[l][1], seeds[l][2]};
      __enzyme_autodiff((void *)run, enzyme_dup, in, ref[l], enzyme_dupnoneed, out, dout,
                        enzyme_const, steps);
      for (int i = 0; i < N; i++) {
        double h = 1e-6, keep = in[i], op[N], om[N], fd = 0;
        in[i] = keep + h;
        run(in, op, steps);
        in[i] = keep - h;
        run(in, om, steps);
        in[i] = keep;
        for (int j = 0; j < N; j++)
          fd += seeds[l][j] * (op[j] - om[j]) / (2 * h);
        char name[40];
        snprintf(name, sizeof name, "fd_n%d_l%d_x%d", steps, l, i);
        check(name, ref[l][i], fd, 1e-6);
      }
    }
    double d[3][N] = {{0}}, dout[3][N];
    for (int l = 0; l < 3; l++)
      for (int j = 0; j < N; j++)
        dout[l][j] = seeds[l][j];
    __enzyme_autodiff((void *)run, enzyme_width, 3, enzyme_dup, in, d[0], d[1], d[2],
                      enzyme_dupnoneed, out, dout[0], dout[1], dout[2], enzyme_const, steps);
    for (int l = 0; l < 3; l++)
      for (int i = 0; i < N; i++) {
        char name[40];
        snprintf(name, sizeof name, "w3_n%d_l%d_x%d", steps, l, i);
        check(name, d[l][i], ref[l][i], 1e-13);
      }
    /* forward vs reverse: <seed_l, J v_l> == <J^T seed_l, v_l>, the tangents at width 3 too */
    double v[3][N] = {{1, 0.5, -1}, {0.2, -0.3, 2}, {-1, 1, 0.25}}, t[3][N], o2[N];
    __enzyme_fwddiff((void *)run, enzyme_width, 3, enzyme_dup, in, v[0], v[1], v[2],
                     enzyme_dupnoneed, o2, t[0], t[1], t[2], enzyme_const, steps);
    for (int l = 0; l < 3; l++) {
      double jv = 0, vjt = 0;
      for (int j = 0; j < N; j++)
        jv += seeds[l][j] * t[l][j], vjt += v[l][j] * d[l][j];
      char name[40];
      snprintf(name, sizeof name, "fwd_rev_n%d_l%d", steps, l);
      check(name, jv, vjt, 1e-12);
    }
  }
  /* the copy: lane l seeds out[l]; d out[l] = cos(x_l) x_{l+1} dx_l + sin(x_l) dx_{l+1} */
  double cd[3][N] = {{0}}, cs[3][N] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, co[N];
  __enzyme_autodiff((void *)copy_mix, enzyme_width, 3, enzyme_dup, in, cd[0], cd[1], cd[2],
                    enzyme_dup, co, cs[0], cs[1], cs[2], enzyme_const, N);
  for (int l = 0; l < 3; l++) {
    char name[32];
    snprintf(name, sizeof name, "copy_l%d_own", l);
    check(name, cd[l][l], cos(in[l]) * in[(l + 1) % N], 1e-14);
    snprintf(name, sizeof name, "copy_l%d_next", l);
    check(name, cd[l][(l + 1) % N], sin(in[l]), 1e-14);
    snprintf(name, sizeof name, "copy_l%d_seed_used", l);
    check(name, cs[l][l], 0.0, 0);
  }
  /* active float arguments: three adjoints each, every lane seeded 1.0 */
  F3 r = __enzyme_autodiff_f3((void *)fl, enzyme_width, 3, 0.7f, 1.5f);
  for (int l = 0; l < 3; l++) {
    char name[24];
    snprintf(name, sizeof name, "float_dx_l%d", l);
    check(name, r.dx[l], (cosf(0.7f) + 2 * 0.7f) * 1.5f, 1e-6);
    snprintf(name, sizeof name, "float_dy_l%d", l);
    check(name, r.dy[l], sinf(0.7f) + 0.7f * 0.7f, 1e-6);
  }
  printf("%s\n", failed ? "FAILED" : "OK");
  return failed != 0;
}
