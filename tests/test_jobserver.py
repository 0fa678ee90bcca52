"""The link's parallel parts within GNU make's jobserver (lto/jobserver.py): never more tools at
once than make's tokens allow, every token given back, a part's error raised after the others end.
"""
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from enzyme_cc.errors import UserError
from enzyme_cc.lto import jobserver


class _Probe:
    """A part that records how many parts run at the same time."""

    def __init__(self, fail_at=None):
        self.lock, self.now, self.most, self.fail_at = threading.Lock(), 0, 0, fail_at

    def __call__(self, k):
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(0.05)
        with self.lock:
            self.now -= 1
        if k == self.fail_at:
            raise UserError(f"part {k} failed")
        return k * k


@pytest.fixture
def make_pipe(monkeypatch):
    """A jobserver pipe holding `tokens` tokens, named in MAKEFLAGS as make 4.3 names it."""
    pipes = []

    def make(tokens):
        r, w = os.pipe()
        os.write(w, b"+" * tokens)
        pipes.append((r, w))
        monkeypatch.setenv("MAKEFLAGS", f" -j{tokens + 1} --jobserver-auth={r},{w}")
        jobserver.jobserver.cache_clear()
        return r

    yield make
    jobserver.jobserver.cache_clear()
    for r, w in pipes:
        os.close(r)
        os.close(w)


def _tokens_left(r):
    os.set_blocking(r, False)
    try:
        return len(os.read(r, 64))
    except BlockingIOError:
        return 0


def test_parts_hold_tokens_and_give_them_back(make_pipe, monkeypatch):
    monkeypatch.setenv("ENZYME_CC_JOBS", "8")
    r = make_pipe(2)                    # make -j3: this process's own token and two more
    probe = _Probe()
    assert jobserver.run_all(probe, range(9)) == [k * k for k in range(9)]
    assert 2 <= probe.most <= 3
    assert _tokens_left(r) == 2


def test_no_free_token_runs_one_part_at_a_time(make_pipe, monkeypatch):
    monkeypatch.setenv("ENZYME_CC_JOBS", "8")
    r = make_pipe(0)
    probe = _Probe()
    assert jobserver.run_all(probe, range(4)) == [0, 1, 4, 9]
    assert probe.most == 1
    assert _tokens_left(r) == 0


def test_a_failing_part_is_raised_and_tokens_given_back(make_pipe, monkeypatch):
    monkeypatch.setenv("ENZYME_CC_JOBS", "4")
    r = make_pipe(3)
    with pytest.raises(UserError, match="part 2 failed"):
        jobserver.run_all(_Probe(fail_at=2), range(12))
    assert _tokens_left(r) == 3


def test_descriptors_make_did_not_pass_are_not_used(monkeypatch):
    """make 4.3 names its pipe to every recipe but keeps it open only in recursive ones: a
    closed descriptor, or one that is another file, is no jobserver (one part per core then)."""
    r, w = os.pipe()
    os.close(r)
    os.close(w)
    with open(__file__) as f:
        for auth in (f"{r},{w}", f"{f.fileno()},{f.fileno()}", "-1,-1", "fifo:/nonexistent"):
            monkeypatch.setenv("MAKEFLAGS", f"-j4 --jobserver-auth={auth}")
            jobserver.jobserver.cache_clear()
            assert jobserver.jobserver() is None, auth
    jobserver.jobserver.cache_clear()


def test_jobs_variable(monkeypatch):
    monkeypatch.setenv("ENZYME_CC_JOBS", "3")
    assert jobserver.limit() == 3
    monkeypatch.setenv("ENZYME_CC_JOBS", "0")
    with pytest.raises(UserError, match="ENZYME_CC_JOBS"):
        jobserver.limit()
    monkeypatch.delenv("ENZYME_CC_JOBS")
    assert jobserver.limit() == len(os.sched_getaffinity(0))


def test_under_gnu_make(tmp_path):
    """GNU make -j3 running two recursive (`+`) recipes that each run parts: at most three parts
    at once in all, and each recipe runs more than one when make has tokens to spare."""
    script = tmp_path / "parts.py"
    script.write_text(textwrap.dedent(f"""
        import os, sys, threading, time
        sys.path[:0] = {sys.path!r}
        os.environ["ENZYME_CC_JOBS"] = "8"
        from enzyme_cc.lto import jobserver
        def part(k):
            start = time.monotonic()
            time.sleep(0.15)
            with open(os.path.join({str(tmp_path)!r}, f"{{sys.argv[1]}}{{k}}.span"), "w") as f:
                f.write(f"{{start}} {{time.monotonic()}}")
            return k
        assert jobserver.jobserver() is not None, "no jobserver"
        assert jobserver.run_all(part, range(6)) == list(range(6))
    """))
    (tmp_path / "Makefile").write_text(
        "all: a b\n"
        f"a:\n\t+{sys.executable} {script} a\n"
        f"b:\n\t+{sys.executable} {script} b\n")
    r = subprocess.run(["make", "-j3", "-C", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    events = []
    for span in tmp_path.glob("*.span"):
        start, end = map(float, span.read_text().split())
        events += [(start, 1), (end, -1)]
    assert len(events) == 24
    running = most = 0
    for _, step in sorted(events, key=lambda e: (e[0], e[1])):   # (ends first at one instant)
        running += step
        most = max(most, running)
    assert 2 <= most <= 3
