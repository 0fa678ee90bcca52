"""Jacobian of a small dense map by forward mode, vector forward mode and reverse mode
(a benchmark, not a test: issue 5's mode comparison).

    .venv/bin/python bench/modes.py [--n 8] [--reps 2000]

The map y = F(x), x and y in R^n (each y_i a nonlinear mix of all x_j), is differentiated by
  fwd       n calls of __enzyme_fwddiff (one column each),
  vec4      n/4 calls of __enzyme_fwddiff with enzyme_width 4 (four columns each),
  vec8      n/8 calls with enzyme_width 8,
  rev       n calls of __enzyme_autodiff (one row each, seeded output shadow),
  rev4      n/4 calls of __enzyme_autodiff with enzyme_width 4 (four rows each),
  rev8      n/8 calls with enzyme_width 8,
each Jacobian checked against the others before timing; prints the median time per Jacobian
and per direction. Vector modes run the primal once per call and the lanes side by side
(reverse: one forward sweep, then one reverse sweep carrying every lane's adjoints).
"""
import argparse
import os
import subprocess
import sys
import tempfile

BIN = os.path.dirname(os.path.abspath(sys.executable))

PROGRAM = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#define N @N@
int enzyme_dup, enzyme_const, enzyme_width, enzyme_dupv, enzyme_dupnoneed;
void __enzyme_fwddiff(void *, ...);
void __enzyme_autodiff(void *, ...);
__attribute__((noinline)) void F(const double *x, double *y) {
  for (int i = 0; i < N; i++) {
    double s = 0;
    for (int j = 0; j < N; j++) s += sin(x[j] * (i + 1)) * x[(i + j) % N];
    y[i] = s * s + x[i];
  }
}
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static double J[6][N][N];
static void fwd(const double *x) {
  double y[N], dy[N], dx[N];
  for (int j = 0; j < N; j++) {
    for (int k = 0; k < N; k++) dx[k] = k == j;
    __enzyme_fwddiff((void *)F, x, dx, enzyme_dup, y, dy);
    for (int i = 0; i < N; i++) J[0][i][j] = dy[i];
  }
}
#define VEC(W) \
static void vec##W(const double *x) { \
  double y[N], dy[W][N], dx[W][N]; \
  for (int j = 0; j < N; j += W) { \
    for (int l = 0; l < W; l++) for (int k = 0; k < N; k++) dx[l][k] = k == j + l; \
    __enzyme_fwddiff((void *)F, enzyme_width, W, enzyme_dupv, sizeof(dx[0]), x, dx, \
                     enzyme_dupv, sizeof(dy[0]), y, dy); \
    for (int l = 0; l < W; l++) for (int i = 0; i < N; i++) J[W / 4][i][j + l] = dy[l][i]; \
  } \
}
VEC(4)
VEC(8)
static void rev(const double *x) {
  double y[N], dy[N], dx[N];
  for (int i = 0; i < N; i++) {
    for (int k = 0; k < N; k++) { dy[k] = k == i; dx[k] = 0; }
    __enzyme_autodiff((void *)F, x, dx, enzyme_dupnoneed, y, dy);
    for (int j = 0; j < N; j++) J[3][i][j] = dx[j];
  }
}
#define REV(W) \
static void rev##W(const double *x) { \
  double y[N], dy[W][N], dx[W][N]; \
  for (int i = 0; i < N; i += W) { \
    for (int l = 0; l < W; l++) for (int k = 0; k < N; k++) { dy[l][k] = k == i + l; dx[l][k] = 0; } \
    __enzyme_autodiff((void *)F, enzyme_width, W, enzyme_dupv, sizeof(dx[0]), x, dx, \
                      enzyme_dupv, sizeof(dy[0]), y, dy); \
    for (int l = 0; l < W; l++) for (int j = 0; j < N; j++) J[3 + W / 4][i + l][j] = dx[l][j]; \
  } \
}
REV(4)
REV(8)
static int cmp(const void *a, const void *b) { double d = *(double *)a - *(double *)b; return (d > 0) - (d < 0); }
int main(int argc, char **argv) {
  int reps = atoi(argv[1]);
  double x[N];
  for (int k = 0; k < N; k++) x[k] = 0.1 * (k + 1);
  void (*ways[6])(const double *) = {fwd, vec4, vec8, rev, rev4, rev8};
  const char *names[6] = {"fwd", "vec4", "vec8", "rev", "rev4", "rev8"};
  for (int w = 0; w < 6; w++) ways[w](x);
  for (int w = 1; w < 6; w++)
    for (int i = 0; i < N; i++) for (int j = 0; j < N; j++)
      if (fabs(J[w][i][j] - J[0][i][j]) > 1e-9 * (1 + fabs(J[0][i][j]))) {
        printf("MISMATCH %s J[%d][%d] %g vs fwd %g\n", names[w], i, j, J[w][i][j], J[0][i][j]);
        return 1;
      }
  for (int w = 0; w < 6; w++) {
    double t[9];
    for (int r = 0; r < 9; r++) { double t0 = now(); for (int k = 0; k < reps; k++) ways[w](x); t[r] = (now() - t0) / reps; }
    qsort(t, 9, sizeof t[0], cmp);
    printf("%s %.6g %.6g\n", names[w], t[4], t[4] / N);
  }
  return 0;
}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=8, help="dimension (a multiple of 8)")
    ap.add_argument("--reps", type=int, default=2000)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "modes.c"), os.path.join(d, "modes")
        with open(src, "w") as f:
            f.write(PROGRAM.replace("@N@", str(a.n)))
        subprocess.run([os.path.join(BIN, "enzyme-cc"), "-O2", src, "-lm", "-o", exe], check=True)
        out = subprocess.run([exe, str(a.reps)], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(out.stdout + out.stderr)
    print(f"Jacobian of a dense R^{a.n} -> R^{a.n} map (median of 9 runs of {a.reps})")
    print(f"{'mode':6} {'s per Jacobian':>15} {'s per direction':>16}")
    for line in out.stdout.split("\n"):
        if line:
            name, jac, per = line.split()
            print(f"{name:6} {float(jac):15.3e} {float(per):16.3e}")


if __name__ == "__main__":
    main()
