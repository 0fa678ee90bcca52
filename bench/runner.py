"""Run one variant of one benchmark binary in its own process and classify the outcome.

A crash, a timeout, an exhausted memory limit or a gradient that disagrees with finite
differences is an outcome like any other: it is recorded and shown, never raised.
"""
from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import time

from .builder import BUILD

RUN_DIR = os.path.join(BUILD, "run")     # cwd of the binaries (ADOL-C may spill tapes here)


def _limits(mem_bytes: int):
    def pre():
        if mem_bytes > 0:
            resource.setrlimit(resource.RLIMIT_AS, (mem_bytes, mem_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return pre


def _signame(rc: int) -> str:
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return f"signal {-rc}"


def run_binary(binary: str, args: list[str], timeout: float, mem_gib: float) -> dict:
    """Run and return {"status", "message", "result", "seconds"}; status is one of ok, WRONG,
    crash, timeout, error."""
    os.makedirs(RUN_DIR, exist_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    try:
        p = subprocess.run([binary, *args], capture_output=True, text=True, timeout=timeout,
                           cwd=RUN_DIR, preexec_fn=_limits(int(mem_gib * 2 ** 30)))
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        return {"status": "timeout", "message": f"no result within {timeout:.0f}s",
                "seconds": round(time.perf_counter() - t0, 2),
                "stdout": (e.stdout or b"")[-2000:].decode(errors="replace")
                if isinstance(e.stdout, bytes) else (e.stdout or "")[-2000:]}
    dt = round(time.perf_counter() - t0, 3)
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    result = None
    for line in out.splitlines():
        if line.startswith("RESULT "):
            try:
                result = json.loads(line[7:])
            except ValueError:
                pass
    rec = {"seconds": dt, "result": result, "returncode": rc}
    if rc < 0:
        msg = f"crash ({_signame(rc)}; each run is limited to {mem_gib:g} GiB of memory"
        if after > before and after * 1024 > 0.6 * mem_gib * 2 ** 30:
            msg += ", and this one came near it: probably out of memory"
        msg += ")"
        tail = (err.strip().splitlines() or [""])[-1]
        if tail:
            msg += f"; stderr: {tail[:200]}"
        rec.update(status="crash", message=msg)
    elif result is None:
        tail = " | ".join((err.strip() or out.strip()).splitlines()[-3:])
        rec.update(status="error", message=f"exit {rc}, no result: {tail[:300]}")
    elif result.get("error"):
        rec.update(status="error", message=result["error"])
    elif "value_after" in result:
        rec.update(status="WRONG", message=(
            f"WRONG GRADIENT: the gradient call changed the primal's inputs (function value "
            f"{result.get('value')!r} before, {result['value_after']!r} after)"))
    elif result.get("check", {}).get("status") == "MISMATCH":
        c = result["check"]
        rec.update(status="WRONG", message=(
            f"WRONG GRADIENT: entry {c.get('index')} is {c.get('got')}, finite differences "
            f"give {c.get('want')} (max rel err {c.get('max_rel_err')} over {c.get('entries')} "
            f"checked entries)"))
    elif rc != 0:
        rec.update(status="error", message=f"exit {rc}: {err.strip()[-300:]}")
    else:
        rec.update(status="ok", message="")
    return rec


def run_selfcheck(binary: str, args: list[str], check: int, timeout: float = 120,
                  mem_gib: float = 4) -> dict:
    """--selfcheck: every AD variant of the binary against finite differences and each other."""
    os.makedirs(RUN_DIR, exist_ok=True)
    try:
        p = subprocess.run([binary, *args, "--selfcheck", "--check", str(check)],
                           capture_output=True, text=True, timeout=timeout, cwd=RUN_DIR,
                           preexec_fn=_limits(int(mem_gib * 2 ** 30)))
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "message": f"no result within {timeout:.0f}s", "lines": []}
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("SELFCHECK")]
    if p.returncode < 0:
        return {"status": "crash", "message": f"crash ({_signame(p.returncode)}) after: "
                + " | ".join(lines[-2:]), "lines": lines}
    if p.returncode == 0:
        return {"status": "ok", "message": "", "lines": lines}
    bad = [ln for ln in lines if "MISMATCH" in ln or "unknown" in ln]
    return {"status": "WRONG" if bad else "error",
            "message": " | ".join(bad) or (p.stderr.strip()[-300:] or f"exit {p.returncode}"),
            "lines": lines}
