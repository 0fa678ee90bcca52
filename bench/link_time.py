"""Link time of enzyme-cc against clang-22 (a benchmark, not a test).

    .venv/bin/python bench/link_time.py [--runs 5] [--files 20]

Generates a program of --files C files (a few functions each), compiles it once with enzyme-cc,
then times the link alone, --runs times, and prints the median (and min/max) of:

  (a) the program without marker calls, linked by enzyme-cc and by clang-22: enzyme-cc's extra
      cost is reading the objects' bitcode to find that there is nothing to differentiate;
  (b) the same objects plus a main that calls __enzyme_autodiff on a function reaching into every
      file: merge, pre-AD optimization, AD, post-AD optimization, codegen, relink. The clang-22
      row links the same program with the marker call resolved by a stub, for scale.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.path.dirname(sys.executable)

UNIT = """#include <math.h>
double f{k}_a(double x) {{ return sin(x) * {k}.5 + x * x; }}
double f{k}_b(double x) {{ double s = 0; for (int i = 0; i < 8; i++) s += f{k}_a(x + i) / (i + 1); return s; }}
double f{k}_c(const double *v, int n) {{ double s = 0; for (int i = 0; i < n; i++) s += f{k}_b(v[i]) * v[i]; return s; }}
"""
PLAIN_MAIN = """#include <stdio.h>
{decls}
int main(void) {{ double v[4] = {{1, 2, 3, 4}}, s = 0;
{calls}
  printf("%f\\n", s); return 0; }}
"""
AD_MAIN = """#include <stdio.h>
{decls}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double all(const double *v, int n) {{ double s = 0;
{calls}
  return s; }}
int main(void) {{ double v[4] = {{1, 2, 3, 4}}, dv[4] = {{0}};
  __enzyme_autodiff((void *)all, enzyme_dup, v, dv, enzyme_const, 4);
  printf("%f %f %f %f\\n", dv[0], dv[1], dv[2], dv[3]); return 0; }}
"""
STUB = "void __enzyme_autodiff(void *f, ...) {}\n"


def sh(cmd, cwd):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stderr}")


def timed(cmd, cwd, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        sh(cmd, cwd)
        times.append(time.perf_counter() - t)
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--files", type=int, default=20)
    args = ap.parse_args()
    enzyme_cc = os.path.join(BIN, "enzyme-cc")
    if not os.path.exists(enzyme_cc):
        enzyme_cc = shutil.which("enzyme-cc") or sys.exit("enzyme-cc not found")
    d = tempfile.mkdtemp(prefix="enzyme-link-bench-")
    try:
        n = args.files
        decls = "\n".join(f"double f{k}_c(const double *v, int n);" for k in range(n))
        calls = "\n".join(f"  s += f{k}_c(v, 4);" for k in range(n))
        for k in range(n):
            with open(os.path.join(d, f"unit{k}.c"), "w") as f:
                f.write(UNIT.format(k=k))
        for name, text in (("plain_main.c", PLAIN_MAIN), ("ad_main.c", AD_MAIN)):
            with open(os.path.join(d, name), "w") as f:
                f.write(text.format(decls=decls, calls=calls))
        with open(os.path.join(d, "stub.c"), "w") as f:
            f.write(STUB)
        units = [f"unit{k}.c" for k in range(n)]
        sh([enzyme_cc, "-O2", "-c", *units, "plain_main.c", "ad_main.c"], d)
        sh(["clang-22", "-O2", "-c", "stub.c"], d)
        objs = [f"unit{k}.o" for k in range(n)]
        rows = [
            ("(a) no markers", "clang-22", ["clang-22", "-O2", "plain_main.o", *objs, "-lm", "-o", "a1"]),
            ("(a) no markers", "enzyme-cc", [enzyme_cc, "-O2", "plain_main.o", *objs, "-lm", "-o", "a2"]),
            ("(b) markers", "clang-22 (stub)", ["clang-22", "-O2", "ad_main.o", "stub.o", *objs, "-lm", "-o", "b1"]),
            ("(b) markers", "enzyme-cc", [enzyme_cc, "-O2", "ad_main.o", *objs, "-lm", "-o", "b2"]),
        ]
        print(f"link time, {n} files + main, {args.runs} runs each (seconds)\n")
        print(f"| {'program':<16} | {'linker':<16} | {'median':>7} | {'min':>7} | {'max':>7} |")
        print(f"| {'-' * 16} | {'-' * 16} | {'-' * 7}:| {'-' * 7}:| {'-' * 7}:|")
        for program, linker, cmd in rows:
            t = timed(cmd, d, args.runs)
            print(f"| {program:<16} | {linker:<16} | {statistics.median(t):7.3f} | {min(t):7.3f} | "
                  f"{max(t):7.3f} |", flush=True)
        sh(["./b2"], d)     # the differentiated program runs
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
