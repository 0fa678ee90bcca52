"""Link time when the marker reaches the whole program (a benchmark, not a test).

    .venv/bin/python bench/link_whole.py [--sizes 400,2000] [--runs 3]

The case of a user who differentiates a whole time step: N functions (`noinline`, as a
simulation's kernels stay functions; a loop, a branch and two libm calls each, 20 per file)
and an objective that calls every one of them, differentiated by one `__enzyme_autodiff`.
Per size, the link alone (objects compiled beforehand), --runs times, medians:

  - clang-22 -O2 -flto=full of the same program (main computes the objective too, so the
    functions stay), the marker resolved by a stub;
  - enzyme-cc -O2 with the AD cache off, and its stages (`-v`);
  - enzyme-cc after one function's body is edited (one object recompiled), the cache on and
    warm: the relink re-runs merge, pre-AD optimization and differentiation (no per-function
    derivative cache yet) and recompiles only the post-AD parts whose bitcode changed;
  - clang-22 -O2 -flto=thin after the same edit, its ThinLTO cache warm (issue 29's reference
    for a rebuild);
  - both after an edit of io.c, the program's output code, which the marker does not reach
    (enzyme-cc finds the AD object by the modules its merge stage keeps);
  - the peak resident memory of each link (its process tree), and the derivative module's
    size against the module before AD (instructions, from ENZYME_CC_DUMP_DIR).

`--lang c++` generates the C++ form of the same case: per function a class whose `noinline`
member evaluates a polynomial functor (a class template over its degree) through a function
template taking a lambda, over a `std::vector<double>` passed by reference; the objective
copies its input into a vector and calls every one (enzyme-c++ against clang++-22).
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from link_time import BIN, FUNC, LIBM, PER_FILE, STUB  # noqa: E402

MAIN = """#include <stdio.h>
{decls}
double obj(const double *v, int n) {{ double s = 0;
{calls}
  return s; }}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
void report(double s);
int main(void) {{
  double v[4] = {{0.1, 0.2, 0.3, 0.4}}, dv[4] = {{0}}, s = obj(v, 4);
  report(s);
  __enzyme_autodiff((void *)obj, enzyme_dup, v, dv, enzyme_const, 4);
  printf("%.12g %.12g %.12g %.12g %.12g\\n", s, dv[0], dv[1], dv[2], dv[3]);
  return 0;
}}
"""


IO = '#include <stdio.h>\nvoid report(double s) {{ fprintf(stderr, "objective %.{p}g\\n", s); }}\n'


def generate_io(d, ext, edit=0):
    """io.c / io.cpp: the program's output, which the marker does not reach; `edit` changes it."""
    with open(os.path.join(d, "io" + ext), "w") as fh:
        fh.write(IO.format(p=6 + edit))


def generate(d, n, edit=0):
    """The program's files in d; `edit` changes one constant in g0's body."""
    files = []
    for f in range(-(-n // PER_FILE)):
        out = ["#include <math.h>"]
        for k in range(f * PER_FILE, min(n, (f + 1) * PER_FILE)):
            if k % PER_FILE:
                out.append(f"double g{k - 1}(const double *v, int n, double x);")
            body = FUNC.format(k=k, c=(k % 13) * 0.1 + 0.05 + (0.01 * edit if k == 0 else 0),
                               c2=1.0 / (1 + k % 7), m1=LIBM[k % 8].format(t="t"),
                               m2=LIBM[(k + 3) % 8].format(t="t"),
                               call=f" + 0.5 * g{k - 1}(v, n, x * 0.5)" if k % 4 else "")
            out.append("__attribute__((noinline)) " + body)
        files.append(f"gen{f}")
        with open(os.path.join(d, f"gen{f}.c"), "w") as fh:
            fh.write("\n".join(out))
    decls = "\n".join(f"double g{k}(const double *v, int n, double x);" for k in range(n))
    calls = "\n".join(f"  s += g{k}(v, n, {1 + (k % 10) * 0.1:.1f});" for k in range(n))
    with open(os.path.join(d, "main.c"), "w") as fh:
        fh.write(MAIN.format(decls=decls, calls=calls))
    with open(os.path.join(d, "stub.c"), "w") as fh:
        fh.write(STUB)
    return files


CPP_HEAD = """#include <cmath>
#include <vector>
template <int K> struct Poly {
  double c[K];
  double operator()(double t) const {
    double s = 0;
    for (int i = K - 1; i >= 0; --i) s = s * t + c[i];
    return s;
  }
};
template <class F> double reduce(const std::vector<double> &v, double x, F f) {
  double s = 0;
  for (unsigned i = 0; i < v.size(); ++i) s += f(v[i] * x, i);
  return s;
}
"""
CPP_FUNC = """class Stage{k} {{
  Poly<{deg}> p{{{{{coeffs}}}}};
  double scale = {c:.3f};
 public:
  __attribute__((noinline)) double eval(const std::vector<double> &v, double x) const {{
    double prod = 1;
    double s = reduce(v, x, [&](double t, unsigned i) {{
      double u = p(t) + scale;
      if (u > scale) prod *= {m2};
      else prod -= 0.1 * t;
      return {m1} * (i + 1);
    }});
    return s + prod;
  }}
}};
double h{k}(const std::vector<double> &v, double x) {{
  Stage{k} st;
  return st.eval(v, x){call};
}}
"""
CPP_MAIN = """#include <cstdio>
#include <vector>
{decls}
double obj(const double *v, int n) {{
  std::vector<double> vv(v, v + n);
  double s = 0;
{calls}
  return s;
}}
extern "C" {{ int enzyme_dup, enzyme_const; void __enzyme_autodiff(void *, ...); }}
void report(double s);
int main() {{
  double v[4] = {{0.1, 0.2, 0.3, 0.4}}, dv[4] = {{0}}, s = obj(v, 4);
  report(s);
  __enzyme_autodiff((void *)obj, enzyme_dup, v, dv, enzyme_const, 4);
  std::printf("%.12g %.12g %.12g %.12g %.12g\\n", s, dv[0], dv[1], dv[2], dv[3]);
  return 0;
}}
"""
DECL_CPP = "double h{k}(const std::vector<double> &v, double x);"


def generate_cpp(d, n, edit=0):
    """The C++ form (see the module docstring); `edit` changes one constant in h0's class."""
    files = []
    for f in range(-(-n // PER_FILE)):
        out = [CPP_HEAD]
        for k in range(f * PER_FILE, min(n, (f + 1) * PER_FILE)):
            if k % PER_FILE:
                out.append(DECL_CPP.format(k=k - 1))
            deg = 2 + k % 4
            coeffs = ", ".join(f"{(k + j) % 5 * 0.1 + 0.1:.1f}" for j in range(deg))
            out.append(CPP_FUNC.format(
                k=k, deg=deg, coeffs=coeffs,
                c=(k % 13) * 0.1 + 0.05 + (0.01 * edit if k == 0 else 0),
                m1=LIBM[k % 8].format(t="t").replace("fabs", "std::fabs"),
                m2=LIBM[(k + 3) % 8].format(t="u").replace("fabs", "std::fabs"),
                call=f" + 0.5 * h{k - 1}(v, x * 0.5)" if k % 4 else ""))
        files.append(f"gen{f}")
        with open(os.path.join(d, f"gen{f}.cpp"), "w") as fh:
            fh.write("\n".join(out))
    decls = "\n".join(DECL_CPP.format(k=k) for k in range(n))
    calls = "\n".join(f"  s += h{k}(vv, {1 + (k % 10) * 0.1:.1f});" for k in range(n))
    with open(os.path.join(d, "main.cpp"), "w") as fh:
        fh.write(CPP_MAIN.format(decls=decls, calls=calls))
    with open(os.path.join(d, "stub.c"), "w") as fh:
        fh.write(STUB)
    return files


# per language: the generator, the source suffix, enzyme-cc's driver and clang's
LANGS = {"c": (generate, ".c", "enzyme-cc", "clang-22"),
         "c++": (generate_cpp, ".cpp", "enzyme-c++", "clang++-22")}


def run(cmd, cwd, env=None):
    """(wall seconds, peak RSS in MiB of the process tree, stderr)."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if status != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{err}")
    return wall, usage.ru_maxrss / 1024, err


def instructions(path):
    """Instructions in the function bodies of an IR text (labels and braces left out)."""
    n, inside = 0, False
    with open(path) as f:
        for line in f:
            if line.startswith("define "):
                inside = True
            elif line.startswith("}"):
                inside = False
            elif inside and line.strip() and not re.match(r'[-\w.$"]+:', line) and \
                    not line.lstrip().startswith(";"):
                n += 1
    return n


def measure(d, n, runs, bindir, lang="c"):
    gen, ext, driver, clang = LANGS[lang]
    enzyme_cc = os.path.join(bindir, driver)
    src = {"stub": "stub.c"}
    files = gen(d, n) + ["io"]
    generate_io(d, ext)
    nocache = dict(os.environ, ENZYME_CC_CACHE="0")
    for f in files + ["main"]:
        run([enzyme_cc, "-O2", "-c", src.get(f, f + ext), "-o", f + ".o"], d)
    for f in files + ["main", "stub"]:       # (the stub is C: clang++ would mangle its name)
        run([clang if f != "stub" else "clang-22", "-O2", "-flto=full", "-c",
             src.get(f, f + ext), "-o", f + ".lto.o"], d)
    objs = [f + ".o" for f in files]
    lto = [f + ".lto.o" for f in files]
    rows, stages = {}, {}
    for _ in range(runs):               # interleaved, so that load changes hit both alike
        w, m, _ = run([clang, "-O2", "-flto=full", "-fuse-ld=lld", "main.lto.o",
                       "stub.lto.o", *lto, "-lm", "-o", "ref"], d)
        rows.setdefault(f"{clang} -flto=full (stub)", []).append((w, m))
        w, m, err = run([enzyme_cc, "-O2", "-v", "main.o", *objs, "-lm", "-o", "ad"], d, nocache)
        rows.setdefault("enzyme-cc (no AD cache)", []).append((w, m))
        for name, s in re.findall(r"^enzyme-cc: ([^:/]+): ([0-9.]+)s$", err, re.M):
            stages.setdefault(name, []).append(float(s))
    out = subprocess.run(["./ad"], cwd=d, capture_output=True, text=True).stdout.strip()
    cached = dict(os.environ, ENZYME_CC_CACHE="1", ENZYME_CC_CACHE_DIR=os.path.join(d, "cache"))
    run([enzyme_cc, "-O2", "main.o", *objs, "-lm", "-o", "ad"], d, cached)     # the cache warm
    for f in files + ["main", "stub"]:
        run([clang if f != "stub" else "clang-22", "-O2", "-flto=thin", "-c",
             src.get(f, f + ext), "-o", f + ".thin.o"], d)
    thin = [clang, "-O2", "-flto=thin", "-fuse-ld=lld", "-Wl,--thinlto-cache-dir=thincache",
            "main.thin.o", "stub.thin.o", *[f + ".thin.o" for f in files], "-lm", "-o", "thin"]
    run(thin, d)                                                               # its cache warm
    edits = (("g0", "gen0", lambda k: gen(d, n, edit=k)),      # a function's body
             ("io", "io", lambda k: generate_io(d, ext, edit=k)))  # code the marker skips
    for what, stem, edit in edits:
        for k in range(runs):           # edit, recompile that file, relink both ways
            edit(k + 1)
            run([clang, "-O2", "-flto=thin", "-c", stem + ext, "-o", stem + ".thin.o"], d)
            w, m, _ = run(thin, d)
            rows.setdefault(f"{clang} -flto=thin, {what} edited (cache warm)", []).append((w, m))
            run([enzyme_cc, "-O2", "-c", stem + ext, "-o", stem + ".o"], d)
            w, m, err = run([enzyme_cc, "-O2", "-v", "main.o", *objs, "-lm", "-o", "ad"], d,
                            cached)
            rows.setdefault(f"enzyme-cc, {what} edited (cache on)", []).append((w, m))
            for name, s in re.findall(r"^enzyme-cc: ([^:/]+): ([0-9.]+)s$", err, re.M):
                stages.setdefault(f"{what} edit: " + name, []).append(float(s))
    dump = os.path.join(d, "dump")
    run([enzyme_cc, "-O2", "main.o", *objs, "-lm", "-o", "ad"], d,
        dict(nocache, ENZYME_CC_DUMP_DIR=dump))
    before, after = (instructions(os.path.join(dump, f"{w}-ad.ll")) for w in ("before", "after"))
    ref = statistics.median(w for w, _ in rows[f"{clang} -flto=full (stub)"])
    print(f"\n{lang}: {n} functions in {len(files)} files, every one reached by the marker; "
          f"{runs} runs (seconds, medians; ratio against {clang} full LTO); gradient {out}\n")
    print("| linker | wall | ratio | peak RSS (MiB) |\n| --- | ---: | ---: | ---: |")
    for name, t in rows.items():
        w = statistics.median(x for x, _ in t)
        print(f"| {name} | {w:.2f} | {w / ref:.2f}x | {max(m for _, m in t):.0f} |")
    print("\n| enzyme-cc stage | median |\n| --- | ---: |")
    for name, t in stages.items():
        print(f"| {name} | {statistics.median(t):.2f} |")
    print(f"\nIR instructions before AD {before}, after AD {after} ({after / before:.2f}x)",
          flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="400,2000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--lang", default="c", help="c, c++ or both (c,c++)")
    args = ap.parse_args()
    bindir = BIN
    if not os.path.exists(os.path.join(bindir, "enzyme-cc")):
        found = shutil.which("enzyme-cc") or sys.exit("enzyme-cc not found")
        bindir = os.path.dirname(found)
    for lang in args.lang.split(","):
        for n in map(int, args.sizes.split(",")):
            d = tempfile.mkdtemp(prefix="enzyme-link-whole-")
            try:
                measure(d, n, args.runs, bindir, lang)
            finally:
                shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
