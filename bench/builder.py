"""Build the benchmark binaries with enzyme-cc into bench/build/<name>/.

Per benchmark: compile each translation unit once with enzyme-cc/enzyme-c++ (objects with
embedded bitcode), then link twice:

  <name>        the default pipeline (optimize, differentiate, optimize), linked with -v so that
                each stage's time is printed (`enzyme-cc: differentiate: 0.123s`)
  <name>-ref    the same objects linked with ENZYME_CC_PREOPT=0 (the paper's "Ref": AD before
                optimization); a benchmark's `ref_defines` recompile its main source for this
                link only (Euler/RK4: without the reverse vector variant, which Ref refuses)
  <name>-noad   only when the first link fails: the program without its enzyme-cc variant
                (-DBENCH_NO_ENZYME, no marker calls: a plain link), so that the primal, finite
                differences and ADOL-C still run

A failed link never raises: its message is kept and shown in the table. Results are cached in
build/<name>/build.json, keyed by a hash of the sources, flags, and enzyme-cc's own code.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field

from .suite import HERE, SRC, Bench

BUILD = os.path.join(HERE, "build")
REPO = os.path.dirname(HERE)
OPT = "-O2"
STAGE_RE = re.compile(r"^enzyme-c(?:c|\+\+|fc): ([A-Za-z][A-Za-z -]*): ([0-9.]+)s\s*$")


def tool_env(extra: dict | None = None) -> dict:
    """The environment for enzyme-cc: the venv's bin on PATH (where enzyme-cc lives)."""
    env = dict(os.environ)
    # absolute: `PATH=.venv/bin:$PATH python -m bench` makes sys.executable relative, and the
    # tools run in BUILD
    bindir = os.path.dirname(os.path.abspath(sys.executable))
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    env.pop("ENZYME_CC_PREOPT", None)
    if extra:
        env.update(extra)
    return env


def driver(bench: Bench) -> str:
    return "enzyme-cc" if bench.lang == "c" else "enzyme-c++"


# ---- system packages ----------------------------------------------------------------------------

HEADERS = {"boost": "/usr/include/boost/numeric/odeint.hpp", "adolc": "/usr/include/adolc/adolc.h"}
PACKAGES = {"boost": "libboost-dev", "adolc": "libadolc-dev"}
_pkg_lock = threading.Lock()
_pkg_tried: dict[str, bool] = {}


def have(pkg: str) -> bool:
    return os.path.isfile(HEADERS[pkg])


def ensure_packages(pkgs, log=print) -> dict[str, bool]:
    """Install the Debian packages of missing headers (apt-get update first), once per run."""
    with _pkg_lock:
        missing = [p for p in pkgs if not have(p) and p not in _pkg_tried]
        if missing and shutil.which("apt-get") and os.geteuid() == 0:
            names = [PACKAGES[p] for p in missing]
            log(f"installing {' '.join(names)} (apt-get)")
            subprocess.run(["apt-get", "update", "-qq"], capture_output=True)
            subprocess.run(["apt-get", "install", "-y", "-qq", *names], capture_output=True,
                           env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
        for p in missing:
            _pkg_tried[p] = True
        return {p: have(p) for p in pkgs}


# ---- results ------------------------------------------------------------------------------------

@dataclass
class Link:
    ok: bool = False
    binary: str = ""
    seconds: float = 0.0                   # wall time of the link command
    stages: dict = field(default_factory=dict)
    error: str = ""                        # the diagnostic, when the link failed
    internal: bool = False                 # "internal error" / traceback (a bug, not a limit)
    log: str = ""

    @property
    def ad_seconds(self) -> float | None:
        return self.stages.get("differentiate")


@dataclass
class Build:
    bench: str
    ok: bool = False                       # something runnable was built
    skipped: str = ""                      # why nothing was built (missing package)
    compile_error: str = ""
    adolc: bool = False
    enzyme: Link = field(default_factory=Link)
    ref: Link = field(default_factory=Link)
    noad: Link | None = None
    key: str = ""
    cached: bool = False

    def base_binary(self) -> str:
        """The binary for primal, FD and ADOL-C: the enzyme-cc one, else the fallback."""
        if self.enzyme.ok:
            return self.enzyme.binary
        if self.noad and self.noad.ok:
            return self.noad.binary
        return ""

    def to_json(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_json(d: dict) -> "Build":
        b = Build(d["bench"])
        for k, v in d.items():
            if k in ("enzyme", "ref"):
                setattr(b, k, Link(**v))
            elif k == "noad":
                b.noad = Link(**v) if v else None
            else:
                setattr(b, k, v)
        return b


# ---- building -----------------------------------------------------------------------------------

def _hash_tree(h, root: str, exts=(".py", ".toml")):
    if not os.path.isdir(root):
        return
    for dirpath, dirnames, files in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(exts):
                p = os.path.join(dirpath, f)
                h.update(os.path.relpath(p, REPO).encode())
                with open(p, "rb") as fh:
                    h.update(fh.read())


def compile_key(bench: Bench, flags: list[str]) -> str:
    """Objects depend on the sources, the flags and enzyme-cc's compile step (the top-level
    modules of enzyme_cc), not on the AD core: core changes relink without recompiling."""
    h = hashlib.sha256()
    h.update(json.dumps([bench.main, bench.adolc, flags, bench.ref_defines]).encode())
    for f in sorted(os.listdir(SRC)):
        if not os.path.isfile(os.path.join(SRC, f)):
            continue                  # src/linalg/: bench/linalg.py's, not these benchmarks'
        with open(os.path.join(SRC, f), "rb") as fh:
            h.update(f.encode())
            h.update(fh.read())
    pkg = os.path.join(REPO, "enzyme_cc")
    if os.path.isdir(pkg):
        for f in sorted(os.listdir(pkg)):
            if f.endswith(".py"):
                with open(os.path.join(pkg, f), "rb") as fh:
                    h.update(f.encode())
                    h.update(fh.read())
    return h.hexdigest()[:16]


def build_key(bench: Bench, flags: list[str]) -> str:
    h = hashlib.sha256()
    h.update(compile_key(bench, flags).encode())
    for d in ("enzyme_cc", "lto", "rules", "bitcode", "stdlib_rules"):
        _hash_tree(h, os.path.join(REPO, d))
    for cfg in ("enzyme.toml",):
        p = os.path.join(REPO, cfg)
        if os.path.isfile(p):
            with open(p, "rb") as fh:
                h.update(fh.read())
    return h.hexdigest()[:16]


def _run(cmd, log_path, env=None, timeout=900):
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env or tool_env(),
                           timeout=timeout, cwd=BUILD)
        rc, out, err = r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = -999, "", f"timed out after {timeout}s: {e}"
    except OSError as e:
        rc, out, err = -998, "", f"cannot run {cmd[0]}: {e}"
    dt = time.perf_counter() - t0
    with open(log_path, "w") as f:
        f.write("$ " + " ".join(cmd) + "\n" + out + err + f"\n[exit {rc}, {dt:.2f}s]\n")
    return rc, out + err, dt


def _diagnostic(text: str) -> str:
    """The error message of a failed command: from the first 'error:' on, shortened."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "error:" in line or line.startswith("Traceback"):
            msg = "\n".join(lines[i:i + 6])
            return msg if len(msg) < 900 else msg[:900] + " ..."
    tail = "\n".join(lines[-6:])
    return tail[-900:] or "failed without a message"


def _link(bench: Bench, objs: list[str], out: str, libs: list[str], env_extra: dict,
          log_path: str) -> Link:
    cmd = [driver(bench), OPT, "-v", *objs, *libs, "-o", out]
    if os.path.exists(out):
        os.remove(out)
    # ENZYME_CC_CACHE=0: really run the AD stage, so that its time is measured
    rc, text, dt = _run(cmd, log_path, env=tool_env({"ENZYME_CC_CACHE": "0", **env_extra}))
    link = Link(seconds=round(dt, 3), log=os.path.relpath(log_path, HERE))
    for line in text.splitlines():
        m = STAGE_RE.match(line.strip())
        if m:
            link.stages[m.group(1)] = float(m.group(2))
    if rc == 0 and os.path.isfile(out):
        link.ok, link.binary = True, out
    else:
        link.error = _diagnostic(text)
        link.internal = "internal error" in text or "Traceback" in text or rc < 0
    return link


def build(bench: Bench, rebuild: bool = False, log=print, ref: bool = True) -> Build:
    """The benchmark's binaries (kept in BUILD and reused while their key holds): the
    enzyme-cc one, the Ref pipeline's unless `ref` is false, and one without AD where the
    enzyme-cc link fails."""
    os.makedirs(BUILD, exist_ok=True)
    d = os.path.join(BUILD, bench.name)
    os.makedirs(d, exist_ok=True)
    res = Build(bench.name)
    pk = ensure_packages(bench.needs, log) if bench.needs else {}
    if "boost" in bench.needs and not pk.get("boost"):
        res.skipped = "Boost.Odeint headers missing (apt-get install libboost-dev)"
        return res
    res.adolc = bool(bench.adolc) and pk.get("adolc", False)
    defs = [f"-D{x}" for x in bench.defines] + (["-DBENCH_HAVE_ADOLC"] if res.adolc else [])
    flags = [OPT, *defs, f"-I{SRC}"]
    main_flags = flags + (["-fno-exceptions"] if bench.lang == "c++" else []) + \
        (["-fno-math-errno"] if bench.figure1 else [])
    res.key = build_key(bench, main_flags)
    stamp = os.path.join(d, "build.json")
    if not rebuild and os.path.isfile(stamp):
        try:
            with open(stamp) as f:
                old = Build.from_json(json.load(f))
            if old.key == res.key and (old.ref.ok or old.ref.error or not ref) and all(
                    os.path.isfile(x.binary) for x in (old.enzyme, old.ref, old.noad)
                    if x and x.ok):
                old.cached = True
                return old
        except (ValueError, KeyError, TypeError):
            pass
    drv = driver(bench)
    libs = (["-ladolc"] if res.adolc else []) + ["-lm"]
    main_o = os.path.join(d, "main.o")
    objs = [main_o] + ([os.path.join(d, "adolc.o")] if res.adolc else [])
    ckey = compile_key(bench, main_flags)
    ostamp = os.path.join(d, "objects.key")
    cached_objs = not rebuild and os.path.isfile(ostamp) and \
        open(ostamp).read() == ckey and all(os.path.isfile(o) for o in objs)
    if not cached_objs:
        if os.path.exists(ostamp):
            os.remove(ostamp)
        rc, text, _ = _run([drv, *main_flags, "-c", os.path.join(SRC, bench.main), "-o", main_o],
                           os.path.join(d, "compile-main.log"))
        if rc != 0:
            res.compile_error = _diagnostic(text)
            return res
        if res.adolc:
            rc, text, _ = _run([drv, *flags, "-c", os.path.join(SRC, bench.adolc), "-o",
                                objs[1]], os.path.join(d, "compile-adolc.log"))
            if rc != 0:
                res.compile_error = _diagnostic(text)
                return res
        with open(ostamp, "w") as f:
            f.write(ckey)
    res.enzyme = _link(bench, objs, os.path.join(d, bench.name), libs, {},
                       os.path.join(d, "link-enzyme.log"))
    ref_objs = objs
    if ref and bench.ref_defines:   # the Ref binary leaves out variants its pipeline refuses
        ref_o = os.path.join(d, "main-ref.o")
        rc, text, _ = _run([drv, *main_flags, *[f"-D{x}" for x in bench.ref_defines], "-c",
                            os.path.join(SRC, bench.main), "-o", ref_o],
                           os.path.join(d, "compile-ref.log"))
        ref_objs = [ref_o] + objs[1:] if rc == 0 else objs
    if ref:
        res.ref = _link(bench, ref_objs, os.path.join(d, bench.name + "-ref"), libs,
                        {"ENZYME_CC_PREOPT": "0"}, os.path.join(d, "link-ref.log"))
    if not res.enzyme.ok:
        noad_o = os.path.join(d, "main-noad.o")
        rc, text, _ = _run([drv, *main_flags, "-DBENCH_NO_ENZYME", "-c",
                            os.path.join(SRC, bench.main), "-o", noad_o],
                           os.path.join(d, "compile-noad.log"))
        if rc == 0:
            res.noad = _link(bench, [noad_o] + objs[1:], os.path.join(d, bench.name + "-noad"),
                             libs, {}, os.path.join(d, "link-noad.log"))
        else:
            res.noad = Link(error=_diagnostic(text))
    res.ok = bool(res.base_binary() or res.ref.ok)
    with open(stamp, "w") as f:
        json.dump(res.to_json(), f, indent=1)
    return res


def build_all(benches: list[Bench], jobs: int = 2, rebuild: bool = False, log=print,
              ref=None) -> dict[str, Build]:
    """build() of each benchmark, `jobs` at once; `ref`: the names whose Ref binary is built
    (None: every one)."""
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        futs = {b.name: ex.submit(build, b, rebuild, log, ref is None or b.name in ref)
                for b in benches}
        return {name: f.result() for name, f in futs.items()}
