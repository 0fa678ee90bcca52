"""OpenMP 2-D heat equation (explicit Jacobi-style stencil with a cubic sink): primal and
gradient times for 1 and 2 threads (a benchmark, not a test: issue 13, part 1).

    .venv/bin/python bench/openmp.py [--n 256] [--steps 40] [--reps 5] [--threads 1,2]

u_{t+1}[i][j] = u + dt * (u[i-1][j] + u[i+1][j] + u[i][j-1] + u[i][j+1] - 4 u) - dt * c * u^3
on an n x n grid (fixed zero boundary), one `#pragma omp parallel for` over the rows per step,
loss = sum w .* u_T. The gradient (reverse mode, w.r.t. the initial field and c) is checked
against central finite differences of the parallel primal before timing. Prints the median
seconds per call, gradient/primal, and the speed-up of 2 threads over 1.
"""
import argparse
import os
import subprocess
import sys
import tempfile

BIN = os.path.dirname(os.path.abspath(sys.executable))

PROGRAM = r"""
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
int enzyme_dup, enzyme_const, enzyme_active;
double __enzyme_autodiff(void *, ...);
static int n, steps;
double heat(const double *u0, double *a, double *b, const double *w, double c) {
  int m = n;
  memcpy(a, u0, sizeof(double) * m * m);
  for (int t = 0; t < steps; t++) {
#pragma omp parallel for schedule(static)
    for (int i = 0; i < m; i++)
      for (int j = 0; j < m; j++) {
        double u = a[i * m + j];
        double up = i > 0 ? a[(i - 1) * m + j] : 0, dn = i < m - 1 ? a[(i + 1) * m + j] : 0;
        double lf = j > 0 ? a[i * m + j - 1] : 0, rt = j < m - 1 ? a[i * m + j + 1] : 0;
        b[i * m + j] = u + 0.2 * (up + dn + lf + rt - 4 * u) - 0.2 * c * u * u * u;
      }
    double *s = a; a = b; b = s;
  }
  double loss = 0;
#pragma omp parallel for reduction(+ : loss)
  for (int k = 0; k < m * m; k++) loss += w[k] * a[k];
  return loss;
}
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static int cmp(const void *x, const void *y) { double d = *(double *)x - *(double *)y; return (d > 0) - (d < 0); }
int main(int argc, char **argv) {
  n = atoi(argv[1]); steps = atoi(argv[2]);
  int reps = atoi(argv[3]), nn = n * n;
  double *u0 = malloc(8 * nn), *du0 = calloc(nn, 8), *a = malloc(8 * nn), *b = malloc(8 * nn),
         *da = calloc(nn, 8), *db = calloc(nn, 8), *w = malloc(8 * nn), c = 0.5;
  for (int k = 0; k < nn; k++) { u0[k] = 0.5 + 0.4 * sin(0.37 * k); w[k] = cos(0.11 * k); }
  double dc = __enzyme_autodiff((void *)heat, enzyme_dup, u0, du0, enzyme_dup, a, da,
                                enzyme_dup, b, db, enzyme_const, w, enzyme_active, c);
  int probe[3] = {0, nn / 2 + n / 3, nn - 1 - n};
  for (int p = 0; p < 4; p++) {
    double h = 1e-6, g = p < 3 ? du0[probe[p]] : dc, fp, fm;
    if (p < 3) {
      u0[probe[p]] += h; fp = heat(u0, a, b, w, c);
      u0[probe[p]] -= 2 * h; fm = heat(u0, a, b, w, c); u0[probe[p]] += h;
    } else { fp = heat(u0, a, b, w, c + h); fm = heat(u0, a, b, w, c - h); }
    double fd = (fp - fm) / (2 * h);
    if (fabs(g - fd) > 1e-5 * (1 + fabs(fd))) { printf("MISMATCH %d %g %g\n", p, g, fd); return 1; }
  }
  double tp[64], tg[64];
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    heat(u0, a, b, w, c);
    tp[r] = now() - t0;
    memset(du0, 0, 8 * nn);
    t0 = now();
    __enzyme_autodiff((void *)heat, enzyme_dup, u0, du0, enzyme_dup, a, da, enzyme_dup, b, db,
                      enzyme_const, w, enzyme_active, c);
    tg[r] = now() - t0;
  }
  qsort(tp, reps, 8, cmp); qsort(tg, reps, 8, cmp);
  printf("%d %.6g %.6g\n", omp_get_max_threads(), tp[reps / 2], tg[reps / 2]);
  return 0;
}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", default="1,2")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "heat.c"), os.path.join(d, "heat")
        with open(src, "w") as f:
            f.write(PROGRAM)
        subprocess.run([os.path.join(BIN, "enzyme-cc"), "-O2", "-fopenmp", src, "-lm", "-o", exe],
                       check=True)
        rows = []
        for t in (int(v) for v in args.threads.split(",")):
            r = subprocess.run([exe, str(args.n), str(args.steps), str(args.reps)], check=True,
                               capture_output=True, text=True,
                               env=dict(os.environ, OMP_NUM_THREADS=str(t)))
            _, tp, tg = r.stdout.split()
            rows.append((t, float(tp), float(tg)))
    print(f"2-D heat, {args.n}x{args.n}, {args.steps} steps (median of {args.reps}, seconds; "
          f"{os.cpu_count()} cores)")
    print("threads  primal     gradient   grad/primal  primal speed-up  gradient speed-up")
    for t, tp, tg in rows:
        print(f"{t:7d}  {tp:.3e}  {tg:.3e}  {tg / tp:11.2f}  {rows[0][1] / tp:15.2f}  "
              f"{rows[0][2] / tg:17.2f}")


if __name__ == "__main__":
    sys.exit(main())
