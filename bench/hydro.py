"""Lagrangian hydrodynamics on an unstructured hex mesh, in the style of LULESH (issue 26): primal
and gradient times, gradient/primal and peak memory of a serial, an OpenMP and an MPI build, and
an ADOL-C peer of the serial one (a benchmark, not a test).

    .venv/bin/python bench/hydro.py [--n 20] [--steps 10] [--reps 7] [--threads 1,2]
                                    [--ranks 1,2,4] [--opt -O2] [--check-only]

Our own code (bench/src/hydro/, nothing copied): an n x n x n box of hexahedra stored as an
unstructured mesh (element -> 8 nodes, node -> element corners). Each step: per element the
pressure + artificial viscosity force p dV/dx on its 8 corners (volume and its derivatives from 6
tetrahedra) and an hourglass force from the 4 hourglass modes of the nodal velocities, written to
an element-indexed corner array; per node a gather of those corners (MPI: the shared node plane
of neighbouring z-slabs summed with MPI_Sendrecv); acceleration, symmetry planes, velocity
(tiny values cut to 0) and position; per element the new volume, the artificial viscosity q
(compression only), a predictor-corrector energy update with an ideal-gas equation of state and
its clamps (e >= emin, p = fmax(p, pmin), cut-offs), and the Courant and volume-change limits,
whose minimum over the elements (`reduction(min:)`, MPI_Allreduce MIN) is the next dt. The
objective: total energy + 0.1 x the sum of the final node coordinates after `steps` steps
(MPI_Allreduce SUM); the gradient is w.r.t. the initial element energies and node velocities
(enzyme_dup), the mesh enzyme_const.

Correctness first, at n = 4, 10 steps: every variant's gradient against central differences on
10 components (5 energies, 5 velocities; relative error printed, the run stops on > 1e-5),
OpenMP at 1 and 2 threads, MPI at 1 and 2 ranks (2 ranks also against the 1-rank gradient on
every component, gathered to rank 0), ADOL-C against central differences. Then timing: medians
of --reps calls (seconds), gradient/primal, peak resident memory after the primal calls and at
the end (MiB, the largest rank's under MPI), and the parallel efficiency T(1) / (P T(P)).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

BIN = os.path.dirname(os.path.abspath(sys.executable))
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "src", "hydro")
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe"]
ADOLC_HEADER = "/usr/include/adolc/adolc.h"
# ADOL-C keeps a tape this size in memory instead of spilling it to files in the working
# directory (entries per buffer; about 2 GB resident at n = 20, 10 steps)
ADOLC_RC = "".join(f'"{k}" "{1 << 28}"\n' for k in ("OBUFSIZE", "LBUFSIZE", "VBUFSIZE",
                                                     "TBUFSIZE")) + '"TBUFNUM" "32"\n'


def available():
    """Which variants this machine can build: serial and openmp always, mpi, adolc."""
    have = ["serial", "openmp"]
    if shutil.which("mpicc") and shutil.which("mpirun"):
        have.append("mpi")
    if os.path.isfile(ADOLC_HEADER):
        have.append("adolc")
    return have


def build(d, variants, opt="-O2"):
    """Builds the variants into directory d; returns {variant: binary}."""
    cc, cxx = os.path.join(BIN, "enzyme-cc"), os.path.join(BIN, "enzyme-c++")
    main = os.path.join(SRC, "hydro.c")
    cmds = {
        "serial": ([cc, *opt.split(), main, "-lm"], {}),
        "openmp": ([cc, *opt.split(), "-fopenmp", main, "-lm"], {}),
        "mpi": (["mpicc", *opt.split(), "-DUSE_MPI", main, "-lm"], {"OMPI_CC": cc}),
        "adolc": ([cxx, *opt.split(), "-Wno-unknown-pragmas",
                   os.path.join(SRC, "hydro_adolc.cpp"), "-ladolc", "-lm"], {}),
    }
    out = {}
    for v in variants:
        cmd, env = cmds[v]
        exe = os.path.join(d, "hydro_" + v)
        r = subprocess.run([*cmd, "-o", exe], capture_output=True, text=True,
                           env=dict(os.environ, **env))
        if r.returncode != 0:
            raise RuntimeError(f"build of {v} failed: {' '.join(cmd)}\n{r.stdout}{r.stderr}")
        out[v] = exe
    return out


def _cmd(variant, exe, par, args):
    if variant == "mpi":
        return [*MPIRUN, "-np", str(par), exe, *map(str, args)]
    return [exe, *map(str, args)]


def _env(variant, par):
    env = dict(os.environ)
    if variant == "openmp":
        env["OMP_NUM_THREADS"] = str(par)
    return env


def check(exes, n=4, steps=10, threads=(1, 2), ranks=(1, 2), cwd=None):
    """Runs each variant's check; returns [(label, passed, output)]."""
    runs = []
    for v, exe in exes.items():
        pars = {"openmp": threads, "mpi": ranks}.get(v, (1,))
        for p in pars:
            r = subprocess.run(_cmd(v, exe, p, (n, steps, 1, 1)), capture_output=True,
                               text=True, env=_env(v, p), cwd=cwd)
            label = v + {"openmp": f" {p} threads", "mpi": f" {p} ranks"}.get(v, "")
            ok = r.returncode == 0 and "check passed" in r.stdout
            runs.append((label, ok, r.stdout + r.stderr))
    return runs


def time_run(variant, exe, par, n, steps, reps, cwd=None):
    """(primal s, gradient s, peak MiB after the primal calls, peak MiB at the end)."""
    r = subprocess.run(_cmd(variant, exe, par, (n, steps, reps, 0)), capture_output=True,
                       text=True, env=_env(variant, par), cwd=cwd)
    m = re.search(r"primal (\S+) gradient (\S+) rss_primal (\S+) rss (\S+)", r.stdout)
    if r.returncode != 0 or not m:
        raise RuntimeError(f"{variant} x{par} failed:\n{r.stdout}{r.stderr}")
    return tuple(map(float, m.groups()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=20, help="elements per side (n^3 elements)")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--opt", default="-O2")
    ap.add_argument("--variants", default=",".join(available()))
    ap.add_argument("--check-only", action="store_true")
    args = ap.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    missing = set(variants) - set(available())
    if missing:
        sys.exit(f"not available here: {', '.join(sorted(missing))}")
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, ".adolcrc"), "w") as f:
            f.write(ADOLC_RC)
        exes = build(d, variants, args.opt)
        runs = check(exes, cwd=d)
        for label, ok, out in runs:
            lines = [ln for ln in out.splitlines() if "rel. error" in ln]
            print(f"check {label}: {'passed' if ok else 'FAILED'}")
            for ln in lines:
                print("    " + ln)
        if not all(ok for _, ok, _ in runs):
            for label, ok, out in runs:
                if not ok:
                    print(f"--- {label} ---\n{out}")
            sys.exit("gradient check failed")
        if args.check_only:
            return 0
        load0 = os.getloadavg()
        print(f"\nhydro, n = {args.n} ({args.n ** 3} elements, {(args.n + 1) ** 3} nodes), "
              f"{args.steps} steps, {args.opt}, median of {args.reps} (seconds); "
              f"{os.cpu_count()} cores, load average before {load0[0]:.2f}")
        print("| variant | threads/ranks | primal | gradient | gradient/primal | eff. primal | "
              "eff. gradient | peak RSS primal (MiB) | peak RSS (MiB) |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        order = [("serial", [1]), ("openmp", [int(t) for t in args.threads.split(",")]),
                 ("mpi", [int(r) for r in args.ranks.split(",")]), ("adolc", [1])]
        for v, pars in order:
            if v not in exes:
                continue
            if v == "mpi":
                pars = [p for p in pars if args.n % p == 0]
            base = None
            for p in pars:
                tp, tg, rp, rg = time_run(v, exes[v], p, args.n, args.steps, args.reps, cwd=d)
                base = base or (tp * p, tg * p)
                eff = (f"{base[0] / (p * tp):.2f} | {base[1] / (p * tg):.2f}"
                       if v in ("openmp", "mpi") else "- | -")
                note = " (oversubscribed)" if v == "mpi" and p > os.cpu_count() else ""
                print(f"| {v} | {p}{note} | {tp:.4f} | {tg:.4f} | {tg / tp:.2f} | {eff} | "
                      f"{rp:.0f} | {rg:.0f} |", flush=True)
        print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
