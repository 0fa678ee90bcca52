"""Link and compile time of enzyme-cc against clang-22 (a benchmark, not a test).

    .venv/bin/python bench/link_time.py [--runs 5] [--compile-runs 30] [--compile-only]

Generates a program of 400 small functions (20 files of 20, loops and libm calls, 4.8k lines),
compiles it once with enzyme-cc and once with clang-22 -flto, then times the link alone, --runs
times, and prints the median (and min/max) of:

  (a) the program without marker calls: clang-22's plain link, clang-22 full LTO (-flto at
      compile and link, same -O2) and enzyme-cc (whose extra cost is reading the objects to find
      that there is nothing to differentiate);
  (b) the same functions plus a main whose __enzyme_autodiff differentiates a function calling
      10 of the 400 (each reaching 3 more): clang-22 full LTO with the marker resolved by a stub,
      and enzyme-cc with the AD cache off (merge, pre-AD optimization, AD, post-AD optimization,
      codegen, relink) and with a cache hit; with enzyme-cc's stage breakdown (`-v`, medians);
  (c) the compile step: one `-O2 -c` of a small C file, --compile-runs times, and of the 20
      generated files: clang-22 against enzyme-cc (setup's compiled launcher, see
      enzyme_cc/launcher.py) and enzyme-cc's Python driver, wall and CPU time
      (`--compile-only` prints this table alone).
"""
import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.path.dirname(os.path.abspath(sys.executable))
FILES, PER_FILE = 20, 20
N = FILES * PER_FILE
LIBM = ["sin({t})", "exp(-{t} * {t} * 0.01)", "log(1.0 + {t} * {t})", "sqrt(1.0 + {t} * {t})",
        "tanh({t})", "pow(1.0 + fabs({t}), 1.5)", "atan({t})", "cos({t}) * {t}"]
FUNC = """double g{k}(const double *v, int n, double x)
{{
  double s = 0, p = 1;
  for (int i = 0; i < n; i++) {{
    double t = v[i] * x + {c:.3f};
    s += {m1} * {c2:.3f};
    if (t > {c:.3f}) p *= {m2};
    else s -= t * p;
  }}
  return s + p{call};
}}
"""
MAIN = """#include <stdio.h>
typedef double (*fn)(const double *, int, double);
{decls}
static const fn all[{n}] = {{ {names} }};
double obj(const double *v, int n) {{ double s = 0;
{calls}
  return s; }}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
int main(void) {{
  double v[4] = {{0.1, 0.2, 0.3, 0.4}}, dv[4] = {{0}}, s = 0;
  for (int k = 0; k < {n}; k++) s += all[k](v, 4, 1.0);
  {ad}
  printf("%f %f %f %f %f\\n", s, dv[0], dv[1], dv[2], dv[3]);
  return 0;
}}
"""
STUB = "void __enzyme_autodiff(void *f, ...) {}\n"
SMALL = """#include <math.h>
double f(const double *x, int n) { double s = 0; for (int i = 0; i < n; i++) s += sin(x[i]);
  return s; }
"""


def generate(d):
    for f in range(FILES):
        out = ["#include <math.h>"]
        for j in range(PER_FILE):
            k = f * PER_FILE + j
            if j:
                out.append(f"double g{k - 1}(const double *v, int n, double x);")
            out.append(FUNC.format(k=k, c=(k % 13) * 0.1 + 0.05, c2=1.0 / (1 + k % 7),
                                   m1=LIBM[k % 8].format(t="t"),
                                   m2=LIBM[(k + 3) % 8].format(t="t"),
                                   call=f" + 0.5 * g{k - 1}(v, n, x * 0.5)" if j % 4 else ""))
        with open(os.path.join(d, f"gen{f}.c"), "w") as fh:
            fh.write("\n".join(out))
    decls = "\n".join(f"double g{k}(const double *v, int n, double x);" for k in range(N))
    names = ", ".join(f"g{k}" for k in range(N))
    calls = "\n".join(f"  s += g{40 * i + 3}(v, n, {1 + i * 0.1:.1f});" for i in range(10))
    ad = "__enzyme_autodiff((void *)obj, enzyme_dup, v, dv, enzyme_const, 4);"
    for name, call in (("plain_main.c", ""), ("ad_main.c", ad)):
        with open(os.path.join(d, name), "w") as fh:
            fh.write(MAIN.format(decls=decls, n=N, names=names, calls=calls, ad=call))
    for name, text in (("stub.c", STUB), ("small.c", SMALL)):
        with open(os.path.join(d, name), "w") as fh:
            fh.write(text)


def sh(cmd, cwd, env=None):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stderr}")
    return r.stderr


def _children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd, cwd, runs, env=None, stages=None):
    """[(wall, cpu)] per run; cpu: user + sys of the command and its children (a loaded
    machine inflates wall time far more than CPU time)."""
    times = []
    for _ in range(runs):
        t, c = time.perf_counter(), _children_cpu()
        err = sh(cmd, cwd, env)
        times.append((time.perf_counter() - t, _children_cpu() - c))
        if stages is not None:
            for name, s in re.findall(r"^enzyme-cc: ([^:/]+): ([0-9.]+)s$", err, re.M):
                stages.setdefault(name, []).append(float(s))
    return times


def row(program, linker, t, ref=None):
    """One table row; returns (wall median, cpu median) as the next rows' reference."""
    m, c = statistics.median(w for w, _ in t), statistics.median(c for _, c in t)
    ratio = f"{m / ref[0]:6.2f}x" if ref else " " * 7
    cratio = f"{c / ref[1]:6.2f}x" if ref else " " * 7
    print(f"| {program:<22} | {linker:<26} | {m:7.3f} | {min(w for w, _ in t):7.3f} | "
          f"{max(w for w, _ in t):7.3f} | {ratio} | {c:7.3f} | {cratio} |", flush=True)
    return m, c


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--compile-runs", type=int, default=30)
    ap.add_argument("--compile-only", action="store_true", help="only the compile-step table")
    args = ap.parse_args()
    enzyme_cc = os.path.join(BIN, "enzyme-cc")
    if not os.path.exists(enzyme_cc):
        enzyme_cc = shutil.which("enzyme-cc") or sys.exit("enzyme-cc not found")
    d = tempfile.mkdtemp(prefix="enzyme-link-bench-")
    nocache = dict(os.environ, ENZYME_CC_CACHE="0")
    try:
        generate(d)
        units = [f"gen{f}" for f in range(FILES)]
        if args.compile_only:
            compile_table(d, enzyme_cc, units, args.compile_runs)
            return
        sh([enzyme_cc, "-O2", "-c", *[u + ".c" for u in units], "plain_main.c", "ad_main.c"], d)
        for u in units + ["plain_main", "ad_main", "stub"]:
            sh(["clang-22", "-O2", "-flto", "-c", u + ".c", "-o", u + ".lto.o"], d)
        objs = [u + ".o" for u in units]
        lto = [u + ".lto.o" for u in units]
        print(f"link time, {N} functions in {FILES} files + main, {args.runs} runs each "
              f"(seconds; ratio: (a) against plain clang-22, (b) against clang-22 full LTO; "
              f"CPU: user + sys of the link and its children)\n")
        print(f"| {'program':<22} | {'linker':<26} | {'median':>7} | {'min':>7} | {'max':>7} "
              f"| {'ratio':>7} | {'CPU':>7} | {'ratio':>7} |")
        print(f"| {'-' * 22} | {'-' * 26} | {'-' * 7}:| {'-' * 7}:| {'-' * 7}:| {'-' * 7}:"
              f"| {'-' * 7}:| {'-' * 7}:|")
        link = ["-O2"]
        plain = row("(a) no markers", "clang-22",
                    timed(["clang-22", *link, "plain_main.o", *objs, "-lm", "-o", "a1"], d,
                          args.runs))
        row("(a) no markers", "enzyme-cc (vs clang-22)",
            timed([enzyme_cc, *link, "plain_main.o", *objs, "-lm", "-o", "a3"], d, args.runs),
            plain)
        row("(a) no markers", "clang-22 -flto (full LTO)",
            timed(["clang-22", *link, "-flto", "plain_main.lto.o", *lto, "-lm", "-o", "a2"], d,
                  args.runs))
        ref = row("(b) marker", "clang-22 -flto (stub)",
                  timed(["clang-22", *link, "-flto", "ad_main.lto.o", "stub.lto.o", *lto, "-lm",
                         "-o", "b1"], d, args.runs))
        stages = {}
        row("(b) marker", "enzyme-cc (no AD cache)",
            timed([enzyme_cc, *link, "-v", "ad_main.o", *objs, "-lm", "-o", "b2"], d, args.runs,
                  nocache, stages), ref)
        row("(b) marker", "enzyme-cc (AD cache hit)",
            timed([enzyme_cc, *link, "ad_main.o", *objs, "-lm", "-o", "b3"], d, args.runs), ref)
        out = [subprocess.run([f"./{b}"], cwd=d, capture_output=True, text=True).stdout
               for b in ("b2", "b3")]
        if out[0] != out[1] or not out[0]:
            sys.exit(f"the differentiated programs disagree: {out}")
        print("\nenzyme-cc stages of (b) without the cache (median seconds):\n")
        print("| stage | median |\n| --- | ---: |")
        for name, t in stages.items():
            print(f"| {name} | {statistics.median(t):.3f} |")
        compile_table(d, enzyme_cc, units, args.compile_runs)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def compile_table(d, enzyme_cc, units, runs):
    """The compile step: `-O2 -c` of a small file, and of every generated file in turn (a build),
    with clang-22, enzyme-cc as installed (setup's compiled launcher when present) and enzyme-cc's
    Python driver. Wall time, and the CPU time (user + system) of the processes started: on a
    shared machine the CPU time is the steadier figure."""
    import resource
    python_driver = [sys.executable, "-m", "enzyme_cc.cli", "clang"]
    compilers = [("clang-22", ["clang-22"]), ("enzyme-cc", [enzyme_cc]),
                 ("python driver", python_driver)]
    for what, files, n in (("`-O2 -c small.c`", ["small"], runs),
                           (f"`-O2 -c` of the {len(units)} generated files", units,
                            max(3, runs // 10))):
        print(f"\ncompile step: {what}, {n} runs (seconds, medians)\n")
        print(f"| {'compiler':<13} | {'wall':>7} | {'ratio':>7} | {'cpu':>7} | {'ratio':>7} |")
        print(f"| {'-' * 13} | {'-' * 7}:| {'-' * 7}:| {'-' * 7}:| {'-' * 7}:|")
        wall = {name: [] for name, _ in compilers}
        cpu = {name: [] for name, _ in compilers}
        for _ in range(n):              # interleaved, so that load changes hit all alike
            for name, cc in compilers:
                r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
                for f in files:
                    sh([*cc, "-O2", "-c", f + ".c", "-o", f + ".o"], d)
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                wall[name].append(time.perf_counter() - t0)
                cpu[name].append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
        base = statistics.median(wall["clang-22"]), statistics.median(cpu["clang-22"])
        for name, _ in compilers:
            w, c = statistics.median(wall[name]), statistics.median(cpu[name])
            ratios = (f"{w / base[0]:6.2f}x", f"{c / base[1]:6.2f}x") if name != "clang-22" \
                else (" " * 7, " " * 7)
            print(f"| {name:<13} | {w:7.3f} | {ratios[0]} | {c:7.3f} | {ratios[1]} |", flush=True)


if __name__ == "__main__":
    main()
