"""The GMM objective in Rust beside the C++ one (a benchmark, not a test; issue 28).

    .venv/bin/python bench/rust_gmm.py [--sizes 10x5x1000,20x10x2000] [--reps 9] [--runs 3]

bench/rust/gmm.rs is the objective of bench/src/gmm.h written in idiomatic Rust (Vecs, slices,
iterators, closures), built with the stable rustc handing its bitcode to enzyme-cc
(`rustc -O -C linker-plugin-lto -C linker=enzyme-cc`); bench/rust/gmm_c.cpp runs gmm.h's C++
on the same data (the same generator) built with `enzyme-c++ -O2`. Each binary times the
primal and the `__enzyme_autodiff` gradient (medians of --reps calls) for d x k x n (dimension,
components, points); the table gives the median of --runs runs of each and checks that both
languages give the same objective and gradient. Needs rustup's stable rustc on LLVM 22.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent


def rustc():
    found = shutil.which("rustc") or str(Path.home() / ".cargo" / "bin" / "rustc")
    out = subprocess.run([found, "-vV"], capture_output=True, text=True).stdout
    if "LLVM version: 22" not in out:
        sys.exit("needs a rustc on LLVM 22 (rustup's stable toolchain)")
    return found


def run(exe, size, reps):
    d, k, n = size.split("x")
    out = subprocess.run([exe, d, k, n, str(reps)], capture_output=True, text=True,
                         check=True).stdout
    m = re.search(r"primal (\S+) s gradient (\S+) s", out)
    values = re.findall(r"(objective|norm|first|last) (\S+)", out)
    return float(m.group(1)), float(m.group(2)), {k: float(v) for k, v in values}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10x5x1000,20x10x2000")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="rust-gmm-")
    rs, cc = os.path.join(tmp, "gmm_rs"), os.path.join(tmp, "gmm_c")
    subprocess.run([rustc(), "-O", "-Clinker-plugin-lto", f"-Clinker={BIN / 'enzyme-cc'}",
                    str(HERE / "rust" / "gmm.rs"), "-o", rs], check=True)
    subprocess.run([str(BIN / "enzyme-c++"), "-O2", "-fno-exceptions",
                    str(HERE / "rust" / "gmm_c.cpp"), "-o", cc, "-lm"], check=True)
    print(f"{'d x k x n':>12} {'language':>8} {'primal (s)':>12} {'gradient (s)':>13} "
          f"{'ratio':>6}")
    for size in args.sizes.split(","):
        res = {"Rust": [], "C++": []}
        for _ in range(args.runs):            # interleaved: a load change hits both alike
            res["Rust"].append(run(rs, size, args.reps))
            res["C++"].append(run(cc, size, args.reps))
        a, b = res["Rust"][0][2], res["C++"][0][2]
        agree = all(abs(a[k] - b[k]) <= 1e-10 * (1 + abs(b[k])) for k in b)
        for lang, rows in res.items():
            p = statistics.median(r[0] for r in rows)
            g = statistics.median(r[1] for r in rows)
            print(f"{size:>12} {lang:>8} {p:12.3e} {g:13.3e} {g / p:6.2f}")
        print(f"{'':>12} objective and gradient {'agree' if agree else 'DIFFER'}: {a} / {b}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
