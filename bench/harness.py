"""`python -m bench`: build the suite with enzyme-cc, check and time every variant, print the
paper's Table 1 (and Figure 1's scaling), write bench/results/<timestamp>.json (and a PNG like
Figure 10 when matplotlib is importable)."""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time

from . import builder, suite
from .runner import run_binary, run_selfcheck

RESULTS = os.path.join(suite.HERE, "results")
VARIANTS = ["primal", "enzyme", "ref", "adolc", "fd"]
LABEL = {"primal": "primal", "enzyme": "enzyme-cc", "ref": "Ref", "adolc": "ADOL-C",
         "fd": "FD", "enzyme-fwd2": "fwd w=2", "enzyme-rev2": "rev w=2"}

MODES = {
    #         reps  min-time  timeout  FD budget  guard budget  max-call
    "quick": dict(reps=5, min_time=0.02, timeout=60, fd_budget=0.5, guard=8.0, max_call=3.0),
    "full": dict(reps=7, min_time=0.05, timeout=600, fd_budget=5.0, guard=120.0, max_call=20.0),
}


# ---- machine description ------------------------------------------------------------------------

def machine() -> dict:
    info = {"cores": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            info["memory_gib"] = round(int(f.readline().split()[1]) / 2 ** 20, 1)
        info["loadavg"] = open("/proc/loadavg").read().split()[:3]
    except OSError:
        pass
    try:
        info["clang"] = subprocess.run(["clang-22", "--version"], capture_output=True,
                                       text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        pass
    return info


def git_state() -> dict:
    def g(*a):
        try:
            return subprocess.run(["git", *a], capture_output=True, text=True,
                                  cwd=builder.REPO).stdout.strip()
        except OSError:
            return ""
    dirty = g("status", "--porcelain", "--", "enzyme_cc", "lto", "rules", "bitcode",
              "stdlib_rules")
    return {"commit": g("rev-parse", "--short", "HEAD"), "core_dirty": bool(dirty)}


# ---- running ------------------------------------------------------------------------------------

def _say(msg: str):
    print(msg, file=sys.stderr, flush=True)


def run_suite(benches, builds, mode: str, opts) -> list[dict]:
    cfg = MODES[mode]
    runs: list[dict] = []
    for bench in benches:
        b = builds[bench.name]
        prev: dict[str, tuple[float, float]] = {}     # variant -> (size, seconds) for the guard
        for case in bench.cases[mode]:
            ngrad = None
            primal_t = None
            primal_value = None
            for v in VARIANTS + bench.vector:
                if v == "adolc" and not bench.adolc:
                    continue
                rec = {"bench": bench.name, "case": case.label, "variant": v}
                runs.append(rec)
                binary, why = _binary_for(b, v)
                if case.missing:
                    rec.update(status="skip", message=case.missing)
                    continue
                if not binary:
                    rec.update(status="build", message=why)
                    continue
                est = None
                if v == "fd":
                    if primal_t is None or ngrad is None:
                        rec.update(status="skip", message="no primal time to size FD by")
                        continue
                    est = bench.fd_cost(ngrad) * primal_t
                    if est > cfg["fd_budget"]:
                        rec.update(status="skip", message=(
                            f"full finite differences skipped: about {est:.3g}s per gradient "
                            f"({bench.fd_cost(ngrad):.0f} primal evaluations) > "
                            f"{cfg['fd_budget']}s budget of {mode} mode"))
                        continue
                if bench.guard_exponent and v in prev and case.size:
                    s0, t0 = prev[v]
                    est = t0 * (case.size / s0) ** bench.guard_exponent
                    if est > cfg["guard"]:
                        rec.update(status="skip", message=(
                            f"skipped: a call would take about {est:.3g}s if the time grows as "
                            f"N^{bench.guard_exponent:g} (it took {t0:.3g}s at N={s0:g}); "
                            f"limit {cfg['guard']}s in {mode} mode"))
                        continue
                check = case.check if v not in ("primal", "fd") else 0
                args = [*case.args, "--variant", "enzyme" if v == "ref" else v,
                        "--reps", str(opts.reps or cfg["reps"]),
                        "--min-time", str(cfg["min_time"]), "--check", str(check),
                        "--max-call", str(cfg["max_call"])]
                _say(f"  {bench.name:6s} {case.label:28s} {LABEL[v]:9s} ...")
                out = run_binary(binary, args, opts.timeout or cfg["timeout"], opts.mem_gib)
                rec.update(status=out["status"], message=out.get("message", ""),
                           wall=out.get("seconds"), binary=os.path.relpath(binary, suite.HERE))
                r = out.get("result") or {}
                if r.get("median") is not None and not isinstance(r.get("median"), str):
                    rec.update(median=r["median"], times=r.get("times"), iters=r.get("iters"),
                               reps=r.get("reps"), check=r.get("check"),
                               maxrss_kb=r.get("maxrss_kb"), input=r.get("input"))
                    rec["value"] = r.get("value")
                    if v == "primal":
                        primal_t = r["median"]
                        ngrad = r.get("ngrad")
                        primal_value = r.get("value")
                    elif _differs(r.get("value"), primal_value) and out["status"] != "crash":
                        out["status"] = "WRONG"
                        out["message"] = (
                            f"WRONG PRIMAL: this binary's function value is {r.get('value')!r}, "
                            f"the primal's is {primal_value!r} (its finite-difference check "
                            f"used its own, different function"
                            + (f"; check: {out['message']})" if out.get("message") else ")"))
                        rec.update(status="WRONG", message=out["message"])
                    if out["status"] == "ok" and case.size:
                        prev[v] = (case.size, r["median"])
                elif out["status"] == "timeout" and case.size:
                    prev[v] = (case.size, opts.timeout or cfg["timeout"])
                if out["status"] != "ok":
                    _say(f"         -> {out['status']}: {out.get('message', '')[:200]}")
    return runs


def _differs(a, b) -> bool:
    if a is None or b is None:
        return False
    return not abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def _binary_for(b: builder.Build, v: str) -> tuple[str, str]:
    if b.skipped:
        return "", b.skipped
    if b.compile_error:
        return "", "compile error: " + b.compile_error
    if v == "enzyme" or v.startswith("enzyme-"):      # the vector variants live there too
        return (b.enzyme.binary, "") if b.enzyme.ok else ("", _link_msg(b.enzyme))
    if v == "ref":
        return (b.ref.binary, "") if b.ref.ok else ("", _link_msg(b.ref))
    base = b.base_binary()
    if v == "adolc" and not b.adolc:
        return "", "ADOL-C not installed"
    if base:
        return base, ""
    return "", "no binary: " + (b.noad.error if b.noad else "")


def _link_msg(link: builder.Link) -> str:
    msg = link.error.replace("enzyme-c++: error: ", "").replace("enzyme-cc: error: ", "")
    if msg.startswith("internal error: "):
        msg = msg[len("internal error: "):]
    return "enzyme-cc: " + ("internal error" if link.internal else "error") + ": " + msg


# ---- tables -------------------------------------------------------------------------------------

def fmt_t(t: float) -> str:
    return f"{t:.3g}" if t >= 1e-3 else f"{t:.2e}"


def _geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


class Notes:
    """Footnotes for every cell that is not a plain time."""

    def __init__(self):
        self.items: list[str] = []
        self.index: dict[str, int] = {}

    def ref(self, text: str) -> str:
        if text not in self.index:
            self.items.append(text)
            self.index[text] = len(self.items)
        return f"[{self.index[text]}]"


def cell(rec: dict | None, notes: Notes) -> str:
    if rec is None:
        return "n/a"
    st = rec["status"]
    where = f"{rec['bench']} {rec['case']} {LABEL[rec['variant']]}: "
    if st == "ok":
        s = fmt_t(rec["median"])
        if rec.get("reps") == 1:
            s += "*"
        return s
    if st == "build":
        msg = rec["message"]
        short = "enzyme-cc: internal error" if msg.startswith("enzyme-cc: internal error") \
            else "enzyme-cc: error" if msg.startswith("enzyme-cc:") else "not built"
        return short + notes.ref(f"{rec['bench']} {LABEL[rec['variant']]}: {msg}")
    if st == "WRONG":
        kind = "WRONG PRIMAL" if rec["message"].startswith("WRONG PRIMAL") else "WRONG GRADIENT"
        return kind + notes.ref(where + rec["message"])
    if st == "skip":
        return "skip" + notes.ref(rec["message"])
    return st + notes.ref(where + rec["message"])


def ratio(a: dict | None, b: dict | None) -> str:
    if a and b and a["status"] == "ok" and b["status"] == "ok" and b["median"] > 0:
        return f"{a['median'] / b['median']:.3g}"
    return "-"


def render(rows: list[list[str]], header: list[str]) -> str:
    w = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).rjust(w[i]) if i > 1 else str(c).ljust(w[i])
                               for i, c in enumerate(r))
    out = [line(header), "  ".join("-" * x for x in w)]
    out += [line(r) for r in rows]
    return "\n".join(out)


def tables(benches, builds, runs, mode) -> tuple[str, dict]:
    notes = Notes()
    by = {(r["bench"], r["case"], r["variant"]): r for r in runs}
    rows, summary = [], {}
    header = ["benchmark", "input", "primal", "enzyme-cc", "Ref", "ADOL-C", "FD", "grad/primal",
              "Ref/enzyme-cc", "ADOL-C/enzyme-cc"]
    for bench in benches:
        if bench.figure1:
            continue
        per_variant = {v: [] for v in VARIANTS}
        for case in bench.cases[mode]:
            rec = {v: by.get((bench.name, case.label, v)) for v in VARIANTS}
            rows.append([bench.title, case.label] + [cell(rec[v], notes) for v in VARIANTS] +
                        [ratio(rec["enzyme"], rec["primal"]), ratio(rec["ref"], rec["enzyme"]),
                         ratio(rec["adolc"], rec["enzyme"])])
            for v in VARIANTS:
                r = rec[v]
                per_variant[v].append(r["median"] if r and r["status"] == "ok" else None)
        summary[bench.name] = {v: _geomean(ts) if all(ts) else None
                               for v, ts in per_variant.items()}
    out = [f"Per input: median seconds per call ({mode} mode; * = a single call, over the "
           f"--max-call limit)", render(rows, header)]

    # the vector-mode variants: the same Jacobian in one call, beside the headline's two sweeps
    rows = []
    vec = [v for b in benches for v in b.vector]
    vec = sorted(set(vec), key=vec.index)
    for bench in benches:
        for case in bench.cases[mode] if bench.vector else ():
            rec = {v: by.get((bench.name, case.label, v)) for v in ["primal", "enzyme"] + vec}
            rows.append([bench.title, case.label] +
                        [cell(r, notes) if v in ["primal", "enzyme"] + bench.vector else "-"
                         for v, r in rec.items()] +
                        [ratio(rec[v], rec["primal"]) for v in ["enzyme"] + vec])
    if rows:
        out += ["", "Vector modes: a Jacobian in vector-mode calls (enzyme-cc = one reverse sweep "
                "per output, as above; fwd/rev w=2: __enzyme_fwddiff / __enzyme_autodiff "
                "with enzyme_width 2: Euler and RK4 one call, BA one per observation)",
                render(rows, ["benchmark", "input", "primal", "enzyme-cc"] +
                       [LABEL[v] for v in vec] + ["grad/primal"] +
                       [f"{LABEL[v]}/primal" for v in vec])]

    # Table 1: geometric mean over the inputs where every input ran
    t1 = []
    for bench in benches:
        if bench.figure1:
            continue
        s = summary[bench.name]
        b = builds[bench.name]
        status = lambda v: next((cell(by[k], notes) for k in by if k[0] == bench.name and
                                 k[2] == v and by[k]["status"] != "ok"), "-")
        t1.append([bench.title, str(len(bench.cases[mode]))] +
                  [fmt_t(s[v]) if s[v] else status(v) for v in VARIANTS] +
                  [f"{s['enzyme'] / s['primal']:.3g}" if s["enzyme"] and s["primal"] else "-",
                   f"{s['ref'] / s['enzyme']:.3g}" if s["ref"] and s["enzyme"] else "-",
                   f"{s['adolc'] / s['enzyme']:.3g}" if s["adolc"] and s["enzyme"] else "-",
                   f"{b.enzyme.ad_seconds:.3f}" if b.enzyme.ad_seconds is not None else "-",
                   f"{b.ref.ad_seconds:.3f}" if b.ref.ad_seconds is not None else "-"])
    out += ["", "Table 1: geometric mean over the inputs (seconds), as in the paper",
            render(t1, ["benchmark", "inputs", "primal", "enzyme-cc", "Ref", "ADOL-C", "FD",
                        "grad/primal", "Ref/enzyme-cc", "ADOL-C/enzyme-cc", "AD stage (s)",
                        "AD stage Ref (s)"])]

    # Figure 1: norm scaling
    for bench in benches:
        if not bench.figure1:
            continue
        rows = []
        prev = {}
        for case in bench.cases[mode]:
            rec = {v: by.get((bench.name, case.label, v)) for v in ("primal", "enzyme", "ref")}
            row = [bench.title, case.label]
            for v in ("primal", "enzyme", "ref"):
                row.append(cell(rec[v], notes))
            for v in ("primal", "enzyme", "ref"):
                r = rec[v]
                if r and r["status"] == "ok" and v in prev:
                    (n0, t0) = prev[v]
                    row.append(f"{math.log(r['median'] / t0) / math.log(case.size / n0):.2f}")
                else:
                    row.append("-")
                if r and r["status"] == "ok":
                    prev[v] = (case.size, r["median"])
            rows.append(row)
        out += ["", "Figure 1: norm gradient scaling (seconds; exponent k in t ~ N^k from the "
                "previous N: 1 = linear, 2 = quadratic)",
                render(rows, ["benchmark", "input", "primal", "enzyme-cc", "Ref", "k primal",
                              "k enzyme-cc", "k Ref"])]

    # link step
    rows = []
    for bench in benches:
        b = builds[bench.name]
        def st(link, label):
            if link.ok:
                return "ok"
            return ("internal error" if link.internal else "error") + \
                (notes.ref(f"{bench.name} {label}: {_link_msg(link)}") if link.error else "")
        if b.skipped or b.compile_error:
            rows.append([bench.title, b.skipped or "compile error", "-", "-", "-", "-"])
            continue
        rows.append([bench.title, st(b.enzyme, "enzyme-cc"), f"{b.enzyme.seconds:.2f}",
                     f"{b.enzyme.ad_seconds:.3f}" if b.enzyme.ad_seconds is not None else "-",
                     st(b.ref, "Ref"), f"{b.ref.seconds:.2f}"])
    out += ["", "Link step (seconds; AD stage = `enzyme-cc: differentiate` of `-v`)",
            render(rows, ["benchmark", "enzyme-cc link", "total", "AD stage", "Ref link",
                          "total"])]
    if notes.items:
        out += ["", "Notes:"] + [f"[{i + 1}] {t}" for i, t in enumerate(notes.items)]
    return "\n".join(out), summary


# ---- figure -------------------------------------------------------------------------------------

def plot(benches, summary, path) -> str | None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    tools = [("enzyme", "enzyme-cc"), ("ref", "Ref"), ("adolc", "ADOL-C")]
    names = [b for b in benches if not b.figure1]
    fig, ax = plt.subplots(figsize=(9, 3.5))
    width = 0.8 / len(tools)
    for j, (v, label) in enumerate(tools):
        xs, ys = [], []
        for i, b in enumerate(names):
            s = summary[b.name]
            best = min([s[t] for t, _ in tools if s.get(t)] or [0]) or None
            x = i + (j - 1) * width
            if s.get(v) and best:
                xs.append(x)
                ys.append(best / s[v])
            else:
                ax.plot([x], [0.05], marker="x", color="red", markersize=9)
        ax.bar(xs, ys, width, label=label)
    ax.set_xticks(range(len(names)), [b.title for b in names])
    ax.set_ylabel("relative speed (1 = fastest)")
    ax.set_ylim(0, 1.1)
    ax.legend()
    ax.set_title("Relative speed of the gradient (x: failed or not available)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return path


# ---- entry point --------------------------------------------------------------------------------

def selfcheck(names=None, jobs=2, rebuild=False) -> int:
    """Build at the smallest sizes and run every binary's --selfcheck (what tests do)."""
    benches = [b for b in suite.benchmarks() if not names or b.name in names]
    builds = builder.build_all(benches, jobs, rebuild, _say)
    bad = 0
    for bench in benches:
        b = builds[bench.name]
        case = bench.cases["test"][0]
        for label, binary, link in (("enzyme-cc", b.base_binary(), b.enzyme),
                                    ("Ref", b.ref.binary if b.ref.ok else "", b.ref)):
            if not link.ok:
                print(f"{bench.name:6s} {label:9s} {_link_msg(link) if link.error else b.skipped}")
            if not binary:
                continue
            r = run_selfcheck(binary, case.args, case.check)
            print(f"{bench.name:6s} {label:9s} {r['status']}: " + (r["message"] or "; ".join(
                ln.split(" ", 2)[2] for ln in r["lines"][:-1] if ln.count(" ") >= 2)))
            bad |= r["status"] != "ok"
    return 1 if bad else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    ap.add_argument("--quick", action="store_true", help="small inputs, under two minutes")
    ap.add_argument("--only", help="comma-separated benchmarks (gmm,ba,lstm,euler,rk4,fft,"
                    "bruss,norm)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="parallel builds (default 2)")
    ap.add_argument("--rebuild", action="store_true", help="ignore cached builds")
    ap.add_argument("--reps", type=int, default=0, help="timed repetitions (>= 5)")
    ap.add_argument("--timeout", type=float, default=0, help="seconds per run")
    ap.add_argument("--mem-gib", type=float, default=4.0, help="memory limit per run (GiB)")
    ap.add_argument("--selfcheck", action="store_true",
                    help="only build and compare the variants at the smallest sizes")
    ap.add_argument("--no-json", action="store_true")
    opts = ap.parse_args(argv)
    names = set(opts.only.split(",")) if opts.only else None
    if opts.reps and opts.reps < 5:
        ap.error("--reps must be at least 5 (the table reports medians of >= 5 runs)")
    if opts.selfcheck:
        return selfcheck(names, opts.jobs, opts.rebuild)
    mode = "quick" if opts.quick else "full"
    benches = [b for b in suite.benchmarks() if not names or b.name in names]
    if names and len(benches) != len(names):
        ap.error(f"unknown benchmark in {opts.only}")
    started = datetime.datetime.now()
    t0 = time.perf_counter()
    _say(f"building {len(benches)} benchmarks with enzyme-cc (-j{opts.jobs}) into "
         f"{os.path.relpath(builder.BUILD)}/")
    builds = builder.build_all(benches, opts.jobs, opts.rebuild, _say)
    for name, b in builds.items():
        state = "cached" if b.cached else "built"
        extra = "" if b.enzyme.ok else "  (enzyme-cc link failed)"
        _say(f"  {name:6s} {state}{extra}")
    build_s = time.perf_counter() - t0
    _say(f"running ({mode} mode)")
    runs = run_suite(benches, builds, mode, opts)
    text, summary = tables(benches, builds, runs, mode)
    total = time.perf_counter() - t0
    info = machine()
    print(text)
    print(f"\n{mode} mode: {total:.0f}s in all ({build_s:.0f}s building); machine: "
          f"{info.get('cores')} cores, {info.get('cpu', '?')}, {info.get('memory_gib', '?')} GiB; "
          f"load average at the end {' '.join(info.get('loadavg', []))}")
    if not opts.no_json:
        os.makedirs(RESULTS, exist_ok=True)
        stamp = started.strftime("%Y%m%d-%H%M%S")
        path = os.path.join(RESULTS, f"{stamp}.json")
        with open(path, "w") as f:
            json.dump({"mode": mode, "started": started.isoformat(timespec="seconds"),
                       "seconds": round(total, 1), "machine": info, "git": git_state(),
                       "builds": {k: v.to_json() for k, v in builds.items()},
                       "runs": runs, "summary": summary, "table": text}, f, indent=1)
        print(f"results: {os.path.relpath(path)}")
        png = plot(benches, summary, os.path.join(RESULTS, f"{stamp}.png"))
        if png:
            print(f"figure: {os.path.relpath(png)}")
    return 0
