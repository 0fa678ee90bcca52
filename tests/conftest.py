"""Shared test helpers: the wrappers on PATH, compiling and running small programs."""
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

BIN = os.path.dirname(sys.executable)
os.environ["PATH"] = BIN + os.pathsep + os.environ["PATH"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, cwd=None, check=True, env=None, input=None):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, input=input)
    if check and r.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, cmd))} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r


def build_and_run(tmp_path, source: str, name="prog.c", flags=("-O2",), driver="enzyme-cc",
                  libs=("-lm",)):
    src = tmp_path / name
    src.write_text(source)
    exe = tmp_path / (name + ".out")
    run([driver, *flags, str(src), *libs, "-o", str(exe)], cwd=tmp_path)
    return run([str(exe)], cwd=tmp_path).stdout


def floats(text: str) -> list[float]:
    out = []
    for tok in text.replace(",", " ").split():
        try:
            out.append(float(tok))
        except ValueError:
            pass
    return out


@pytest.fixture
def c_program(tmp_path):
    def go(source, **kw):
        return build_and_run(tmp_path, source, **kw)
    return go


class ParallelBuilds:
    """Runs `job(*key, root)` for every wanted key in a thread pool sized to the machine, once
    per key (a key asked for later is submitted then); `result(*key)` waits for it."""

    def __init__(self, job, root, wanted):
        self.job, self.root = job, root
        self.pool = ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2))
        self.futures = {}
        for key in wanted:
            self._submit(key)

    def _submit(self, key):
        if key not in self.futures:
            self.futures[key] = self.pool.submit(self.job, *key, self.root)
        return self.futures[key]

    def result(self, *key):
        return self._submit(key).result()


def will_run(item) -> bool:
    """Whether a collected test runs (a skipped one, the slow tier's, needs no build)."""
    return item.get_closest_marker("skip") is None


def pytest_collection_modifyitems(config, items):
    """Tests marked `slow` (slower variants of cases the suite covers otherwise) run only with
    ENZYME_CC_SLOW=1, so that the default suite stays within its time on 2 cores."""
    if os.environ.get("ENZYME_CC_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow tier: run with ENZYME_CC_SLOW=1")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
