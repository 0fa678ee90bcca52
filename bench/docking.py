"""Docking energy in the style of molecular docking codes (issue 26): primal and gradient times,
gradient/primal and peak memory, at 1 and 2 threads (a benchmark, not a test).

    .venv/bin/python bench/docking.py [--poses 2048] [--protein 938] [--reps 5] [--threads 1,2]
                                      [--opt "-O3 -ffast-math"]

Our own kernel (nothing copied): `float` data, `#pragma omp parallel for` over groups of 4 poses
(each group keeps its 4 transforms and energies in local arrays, as GPU-minded docking codes do),
per group a loop over the 26 ligand atoms and an inner loop over the protein atoms with
branches: a steric clash term, electrostatics with a cut-off and a clamped desolvation term.
The objective is the sum of the poses' energies; the gradient is taken w.r.t. the 6 pose
parameters of every pose. Before timing, the same source built with `double` checks its
gradient against central finite differences at a small size. Prints medians of --reps calls
(seconds), gradient/primal, and the peak resident memory of the process (primal and gradient
runs together).
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
#include <string.h>
#include <time.h>
#ifndef REAL
#define REAL float
#endif
typedef REAL real;
typedef struct { real x, y, z; int type; } Atom;
typedef struct { real radius, hphb, elsc; int hbtype; } FF;
#define PPWI 4
#define NLIG 26

static void group_energy(const real *poses, int g, const Atom *lig, int npro, const Atom *pro,
                         const FF *ff, real *out) {
  real tr[3][4][PPWI], etot[PPWI];
  for (int l = 0; l < PPWI; l++) {
    const real *ps = poses + 6 * (g * PPWI + l);
    real sx = sin(ps[0]), cx = cos(ps[0]), sy = sin(ps[1]), cy = cos(ps[1]);
    real sz = sin(ps[2]), cz = cos(ps[2]);
    tr[0][0][l] = cy * cz; tr[0][1][l] = sx * sy * cz - cx * sz;
    tr[0][2][l] = cx * sy * cz + sx * sz; tr[0][3][l] = ps[3];
    tr[1][0][l] = cy * sz; tr[1][1][l] = sx * sy * sz + cx * cz;
    tr[1][2][l] = cx * sy * sz - sx * cz; tr[1][3][l] = ps[4];
    tr[2][0][l] = -sy; tr[2][1][l] = sx * cy; tr[2][2][l] = cx * cy; tr[2][3][l] = ps[5];
    etot[l] = 0;
  }
  for (int il = 0; il < NLIG; il++) {
    const Atom a = lig[il];
    const FF lp = ff[a.type];
    real lx[PPWI], ly[PPWI], lz[PPWI];
    for (int l = 0; l < PPWI; l++) {
      lx[l] = tr[0][0][l] * a.x + tr[0][1][l] * a.y + tr[0][2][l] * a.z + tr[0][3][l];
      ly[l] = tr[1][0][l] * a.x + tr[1][1][l] * a.y + tr[1][2][l] * a.z + tr[1][3][l];
      lz[l] = tr[2][0][l] * a.x + tr[2][1][l] * a.y + tr[2][2][l] * a.z + tr[2][3][l];
    }
    for (int k = 0; k < npro; k++) {
      const Atom b = pro[k];
      const FF pp = ff[b.type];
      real rr = lp.radius + pp.radius, chrg = lp.elsc * pp.elsc;
      real sign = (lp.hphb < 0) != (pp.hphb < 0) ? -1 : 1;
      real hw = sign * (fabs(lp.hphb) + fabs(pp.hphb)) * (real)0.05;
      for (int l = 0; l < PPWI; l++) {
        real dx = lx[l] - b.x, dy = ly[l] - b.y, dz = lz[l] - b.z;
        real d = sqrt(dx * dx + dy * dy + dz * dz + (real)1e-6);
        real dist = d - rr, e = 0;
        if (dist < 0) e += (1 - d / rr) * (real)38;                      /* steric clash */
        if (d < 4) e += (chrg < 0 ? 2 : 1) * chrg * (1 - d * (real)0.25) * (real)0.45;
        real ds = (real)5.5 - dist;                                       /* desolvation */
        if (ds > 0) e += hw * (ds < 1 ? ds : 1);
        etot[l] += e;
      }
    }
  }
  for (int l = 0; l < PPWI; l++) out[l] = (real)0.5 * etot[l];
}

real total(const real *poses, int nposes, const Atom *lig, int npro, const Atom *pro,
           const FF *ff) {
  real s = 0;
#pragma omp parallel for reduction(+ : s) schedule(static)
  for (int g = 0; g < nposes / PPWI; g++) {
    real out[PPWI];
    group_energy(poses, g, lig, npro, pro, ff, out);
    for (int l = 0; l < PPWI; l++) s += out[l];
  }
  return s;
}

void __enzyme_autodiff(void *, ...);
int enzyme_dup, enzyme_const;
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static int cmp(const void *x, const void *y) { double d = *(double *)x - *(double *)y; return (d > 0) - (d < 0); }
static real unit(void) { return rand() / (real)RAND_MAX; }

int main(int argc, char **argv) {
  int nposes = atoi(argv[1]), npro = atoi(argv[2]), reps = atoi(argv[3]), check = atoi(argv[4]);
  srand(7);
  Atom lig[NLIG], *pro = malloc(npro * sizeof *pro);
  FF ff[8];
  for (int t = 0; t < 8; t++)
    ff[t] = (FF){(real)1.2 + (real)0.1 * t, (t % 3 - 1) * (real)0.7, (t % 4 - (real)1.5) * (real)0.3, t % 2};
  for (int i = 0; i < NLIG; i++) lig[i] = (Atom){4 * unit() - 2, 4 * unit() - 2, 4 * unit() - 2, i % 8};
  for (int i = 0; i < npro; i++) pro[i] = (Atom){20 * unit() - 10, 20 * unit() - 10, 20 * unit() - 10, (3 * i) % 8};
  real *poses = malloc(6 * nposes * sizeof(real)), *dposes = calloc(6 * nposes, sizeof(real));
  for (int i = 0; i < 6 * nposes; i++) poses[i] = i % 6 < 3 ? (real)6.28 * unit() : 2 * unit() - 1;
  if (check) {
    __enzyme_autodiff((void *)total, enzyme_dup, poses, dposes, enzyme_const, nposes,
                      enzyme_const, lig, enzyme_const, npro, enzyme_const, pro, enzyme_const, ff);
    int bad = 0;
    for (int i = 0; i < 6 * nposes; i += 7) {
      real x0 = poses[i], h = (real)1e-6;
      poses[i] = x0 + h; double fp = total(poses, nposes, lig, npro, pro, ff);
      poses[i] = x0 - h; double fm = total(poses, nposes, lig, npro, pro, ff);
      poses[i] = x0;
      double fd = (fp - fm) / (2 * h);
      if (fabs(dposes[i] - fd) > 1e-5 * (1 + fabs(fd))) { printf("MISMATCH %d %g %g\n", i, (double)dposes[i], fd); bad = 1; }
    }
    printf(bad ? "check failed\n" : "check passed\n");
    return bad;
  }
  double tp[64], tg[64];
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    volatile real s = total(poses, nposes, lig, npro, pro, ff);
    tp[r] = now() - t0;
    (void)s;
    memset(dposes, 0, 6 * nposes * sizeof(real));
    t0 = now();
    __enzyme_autodiff((void *)total, enzyme_dup, poses, dposes, enzyme_const, nposes,
                      enzyme_const, lig, enzyme_const, npro, enzyme_const, pro, enzyme_const, ff);
    tg[r] = now() - t0;
  }
  qsort(tp, reps, 8, cmp); qsort(tg, reps, 8, cmp);
  printf("%.6g %.6g\n", tp[reps / 2], tg[reps / 2]);
  return 0;
}
"""


def _run(cmd, env):
    """(stdout, peak RSS in MiB, user s, system s) of a finished run."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out}")
    return out, usage.ru_maxrss / 1024, usage.ru_utime, usage.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--poses", type=int, default=2048)
    ap.add_argument("--protein", type=int, default=938)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--opt", default="-O3 -ffast-math")
    args = ap.parse_args()
    cc = os.path.join(BIN, "enzyme-cc")
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "docking.c")
        with open(src, "w") as f:
            f.write(PROGRAM)
        for name, extra in (("dock", []), ("dock_double", ["-DREAL=double"])):
            subprocess.run([cc, *args.opt.split(), "-fopenmp", *extra, src, "-lm", "-o",
                            os.path.join(d, name)], check=True)
        out, *_ = _run([os.path.join(d, "dock_double"), "16", "60", "1", "1"], dict(os.environ))
        print(f"double-precision build, 16 poses x 60 protein atoms: {out.strip()}")
        print(f"\ndocking, {args.poses} poses x 26 ligand x {args.protein} protein atoms, float, "
              f"{args.opt} (median of {args.reps}, seconds; {os.cpu_count()} cores)")
        print("| threads | primal | gradient | gradient/primal | peak RSS (MiB) | user s | sys s |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for t in (int(v) for v in args.threads.split(",")):
            out, rss, user, system = _run(
                [os.path.join(d, "dock"), str(args.poses), str(args.protein), str(args.reps), "0"],
                dict(os.environ, OMP_NUM_THREADS=str(t)))
            tp, tg = map(float, out.split())
            print(f"| {t} | {tp:.4f} | {tg:.4f} | {tg / tp:.2f} | {rss:.0f} | {user:.2f} | "
                  f"{system:.2f} |")


if __name__ == "__main__":
    sys.exit(main())
