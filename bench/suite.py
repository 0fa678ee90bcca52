"""The benchmark suite: what to build and which inputs to run, per mode.

Each benchmark is one C/C++ program in bench/src (the differentiated code, compiled with
-fno-exceptions) plus, where ADOL-C applies, a second translation unit with the ADOL-C variant
(the same templated math instantiated with adouble). Sizes:

  test   the smallest inputs, for tests/test_bench.py (self-check only)
  quick  one or two small inputs per benchmark (`python -m bench --quick`, under two minutes)
  full   larger inputs, several per benchmark (`python -m bench`)
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "src")
DATA = os.path.join(HERE, "data")


def adbench_dirs() -> list[str]:
    """Where ADBench inputs are looked up: bench/data (a few small ones, in git), then
    $BENCH_ADBENCH_DIR, then the shared checkout next to the repository."""
    dirs = [DATA]
    env = os.environ.get("BENCH_ADBENCH_DIR")
    if env:
        dirs.append(env)
    repo = os.path.dirname(HERE)
    dirs.append(os.path.join(os.path.dirname(repo), "shared", "adbench"))
    return dirs


def find_input(rel: str) -> str | None:
    for d in adbench_dirs():
        p = os.path.join(d, rel)
        if os.path.isfile(p):
            return p
    return None


@dataclass
class Case:
    label: str                  # shown in the table
    args: list[str]             # command-line arguments before the driver options
    size: float = 0             # for scaling (norm) and the run-time guard
    check: int = 24             # entries compared with finite differences (0: none)
    missing: str = ""           # why the case cannot run (input file absent)


@dataclass
class Bench:
    name: str
    title: str
    main: str                                  # main source in bench/src
    adolc: str | None = None                   # ADOL-C translation unit
    defines: list[str] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)   # "boost", "adolc"
    # full FD gradient cost in primal evaluations, from the gradient length
    fd_cost: object = None
    # quadratic guard: estimate a case's time from the previous one as (size ratio)^2
    guard_exponent: float = 0
    figure1: bool = False                      # the norm scaling table, not Table 1
    # extra enzyme-cc variants of the default binary (vector modes), in their own table
    vector: list[str] = field(default_factory=list)
    # defines of the Ref binary's main object only: vector variants that the Ref pipeline refuses
    ref_defines: list[str] = field(default_factory=list)
    cases: dict = field(default_factory=dict)  # mode -> list[Case]

    @property
    def lang(self) -> str:
        return "c" if self.main.endswith(".c") else "c++"


def _adb(label: str, rel: str, check: int = 24) -> Case:
    p = find_input(rel)
    if p is None:
        return Case(label, [], check=check, missing=f"input {rel} not found (looked in "
                    f"{', '.join(adbench_dirs())})")
    return Case(label, [p], check=check)


def _gmm(d: int, k: int, n: str) -> Case:
    return _adb(f"d={d} K={k} n={n}", f"gmm/{n}/gmm_d{d}_K{k}.txt")


def _ba(name: str) -> Case:
    n = name.split("_")[0]
    return _adb(f"{n} ({name.split('_', 1)[1].replace('_', ' ')})", f"ba/{name}.txt")


def _lstm(l: int, c: int) -> Case:
    return _adb(f"l={l} c={c}", f"lstm/lstm_l{l}_c{c}.txt")


def _steps(n: int) -> Case:
    return Case(f"{n:.0e} steps".replace("e+0", "e"), [str(n)], size=n)


def _pow2(k: int) -> Case:
    return Case(f"n=2^{k}", [str(2 ** k)], size=2 ** k)


def _grid(n: int) -> Case:
    return Case(f"N={n}", [str(n)], size=n * n)


def _norm(n: int, check: int = 0) -> Case:
    return Case(f"N={n:.0e}".replace("e+0", "e"), [str(n)], size=n, check=check)


# the 2x2 Jacobian in one vector-mode call (bench/src/ode.cpp): forward mode, width 2 (no
# tape), and reverse mode, width 2 (one forward sweep, the reverse sweep once per lane); the
# Ref pipeline refuses the latter on Odeint (unoptimized code spills the pointer arguments, so
# the forward sweep keeps lane 0's shadow pointers), so the Ref binary is built without it
ODE_VECTOR = ["enzyme-fwd2", "enzyme-rev2"]


def benchmarks() -> list[Bench]:
    return [
        Bench("gmm", "GMM", "gmm.cpp", "gmm_adolc.cpp", needs=["adolc"],
              fd_cost=lambda n: 2 * n,
              cases={"test": [_gmm(2, 5, "1k")],
                     # d=20 K=50: a tape (60 MB) far out of cache, which small inputs hide
                     "quick": [_gmm(2, 5, "1k"), _gmm(10, 10, "1k"), _gmm(20, 50, "1k")],
                     "full": [_gmm(2, 5, "1k"), _gmm(10, 10, "1k"), _gmm(20, 50, "1k"),
                              _gmm(10, 25, "10k")]}),
        Bench("ba", "BA", "ba.cpp", "ba_adolc.cpp", needs=["adolc"],
              fd_cost=lambda n: 62,   # 2 block evaluations per entry, 31 entries per block
              vector=["enzyme-rev2"],  # both rows of an observation's block in one call
              ref_defines=["BENCH_NO_REVERSE_VECTOR"],   # refused by Ref, as for Euler/RK4
              cases={"test": [_ba("ba1_n49_m7776_p31843")],
                     "quick": [_ba("ba1_n49_m7776_p31843")],
                     "full": [_ba("ba1_n49_m7776_p31843"), _ba("ba5_n257_m65132_p225911"),
                              _ba("ba10_n1197_m126327_p563734")]}),
        Bench("lstm", "LSTM", "lstm.cpp", "lstm_adolc.cpp", needs=["adolc"],
              fd_cost=lambda n: 2 * n,
              cases={"test": [_lstm(2, 1024)],
                     "quick": [_lstm(2, 1024)],
                     "full": [_lstm(2, 1024), _lstm(4, 1024), _lstm(2, 4096), _lstm(4, 4096)]}),
        Bench("euler", "Euler", "ode.cpp", "ode_adolc.cpp", defines=["ODE_RK4=0"],
              needs=["boost", "adolc"], fd_cost=lambda n: 2 * n, vector=ODE_VECTOR,
              ref_defines=["BENCH_NO_REVERSE_VECTOR"],
              cases={"test": [Case("100 steps", ["100"], size=100)],
                     "quick": [_steps(10 ** 4)],
                     "full": [_steps(10 ** 4), _steps(10 ** 5), _steps(10 ** 6)]}),
        Bench("rk4", "RK4", "ode.cpp", "ode_adolc.cpp", defines=["ODE_RK4=1"],
              needs=["boost", "adolc"], fd_cost=lambda n: 2 * n, vector=ODE_VECTOR,
              ref_defines=["BENCH_NO_REVERSE_VECTOR"],
              cases={"test": [Case("100 steps", ["100"], size=100)],
                     "quick": [_steps(10 ** 4)],
                     "full": [_steps(10 ** 4), _steps(10 ** 5), _steps(10 ** 6)]}),
        Bench("fft", "FFT", "fft.cpp", "fft_adolc.cpp", needs=["adolc"],
              fd_cost=lambda n: 2 * n,
              cases={"test": [Case("n=64", ["64"], size=64, check=128)],
                     "quick": [_pow2(14)],
                     "full": [_pow2(12), _pow2(14), _pow2(16), _pow2(18)]}),
        Bench("bruss", "Bruss", "bruss.cpp", "bruss_adolc.cpp", needs=["adolc"],
              fd_cost=lambda n: 2 * n,
              cases={"test": [Case("N=8", ["8"], size=64, check=131)],
                     "quick": [_grid(32), _grid(128), _grid(512)],   # 512: L1 set aliasing
                     "full": [_grid(32), _grid(128), _grid(512)]}),
        Bench("norm", "norm (Figure 1)", "norm.c", None, fd_cost=lambda n: 2 * n,
              guard_exponent=2, figure1=True,
              cases={"test": [Case("N=100", ["100"], size=100, check=100)],
                     # 2e3: a second point for Ref, whose O(N^2) tape outgrows memory at 1e4
                     "quick": [_norm(10 ** 3, check=24), _norm(2 * 10 ** 3), _norm(10 ** 4),
                               _norm(10 ** 5)],
                     "full": [_norm(10 ** 3, check=24), _norm(2 * 10 ** 3), _norm(10 ** 4),
                              _norm(10 ** 5)]}),
    ]
