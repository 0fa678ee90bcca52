"""Dense linear algebra through a static library (issue 26): primal and gradient times,
gradient/primal and peak memory (a benchmark, not a test).

    .venv/bin/python bench/linalg.py [--sizes 200,400] [--nb 32] [--reps 9] [--opt -O2]
                                     [--defined-blas rule,code]

Our own blocked Cholesky and LU with partial pivoting (bench/src/linalg/factor.f90) over our own
BLAS-style dgemm/dsyrk/dtrsm with the Reference BLAS interface (blas3.f90), built with enzyme-fc
into a static library with embedded bitcode, as a user builds Reference-LAPACK, and called from C
(linalg_bench.c): the log-determinant by Cholesky, and w . A^-1 b by LU and two triangular
solves; gradients with respect to A (and b). The library's level-3 routines take enzyme-cc's
BLAS rule (rules/blas.py) because the program defines them with that interface; with
`--defined-blas code` (ENZYME_CC_DEFINED_BLAS=code) they are differentiated as code, to compare.
Prints, per build and size, the medians of --reps calls (seconds), gradient/primal, and the peak
resident memory of the process (all its runs).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

BIN = os.path.dirname(os.path.abspath(sys.executable))
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "src", "linalg")


def build(tmp, opt, how):
    env = dict(os.environ, PATH=BIN + os.pathsep + os.environ.get("PATH", ""),
               ENZYME_CC_DEFINED_BLAS=how)
    fc, cc = os.path.join(BIN, "enzyme-fc"), os.path.join(BIN, "enzyme-cc")
    for name in ("blas3.f90", "factor.f90", "linalg_bench.c"):
        shutil.copy(os.path.join(SRC, name), tmp)
    steps = [[fc, *opt, "-c", "blas3.f90", "factor.f90"],
             ["llvm-ar-22", "rcs", "liblinalg.a", "blas3.o", "factor.o"],
             [cc, *opt, "-c", "linalg_bench.c", "-o", "main.o"],
             [fc, *opt, "main.o", "-L.", "-llinalg", "-lm", "-o", "linalg_bench_" + how]]
    for cmd in steps:
        subprocess.run(cmd, cwd=tmp, env=env, check=True)
    return os.path.join(tmp, "linalg_bench_" + how)


def run(exe, n, nb, reps):
    """(lines, peak resident MiB) of one process."""
    proc = subprocess.Popen([exe, str(n), str(nb), str(reps)], stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        sys.exit(f"linalg_bench {n} failed ({proc.returncode})")
    return out.splitlines(), usage.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="200,400")
    ap.add_argument("--nb", type=int, default=32)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--opt", default="-O2")
    ap.add_argument("--defined-blas", default="rule", help="rule, code or both (comma)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        exes = {how: build(tmp, a.opt.split(), how) for how in a.defined_blas.split(",")}
        print(f"{'BLAS':<6}{'kernel':<18}{'n':>6}{'primal s':>12}{'gradient s':>12}"
              f"{'grad/primal':>13}{'peak MiB':>10}")
        for n in map(int, a.sizes.split(",")):
            for how, exe in exes.items():       # interleaved: the builds share the same load
                lines, peak = run(exe, n, a.nb, a.reps)
                for line in lines:
                    name, primal, grad = line.split()[:3]
                    print(f"{how:<6}{name:<18}{n:>6}{float(primal):>12.3e}{float(grad):>12.3e}"
                          f"{float(grad) / float(primal):>13.2f}{peak:>10.0f}")


if __name__ == "__main__":
    main()
