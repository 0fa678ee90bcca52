"""Shared test helpers: the wrappers on PATH, compiling and running small programs."""
import os
import subprocess
import sys
import zlib
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


def environ(**extra) -> dict:
    """A copy of the environment with `extra`, safe in a ParallelBuilds thread: pytest's own
    thread sets and deletes PYTEST_CURRENT_TEST meanwhile, and a copy that iterates os.environ
    then meets a key that is gone (a KeyError that failed a corpus test)."""
    while True:
        try:
            return dict(os.environ, **extra)
        except (KeyError, RuntimeError):
            continue


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


def selected(request, *names) -> list[tuple]:
    """The values of parameters `names` of the tests of the requesting module that will run:
    the builds a module-scoped ParallelBuilds fixture starts with."""
    out = []
    for item in request.session.items:
        cs = getattr(item, "callspec", None)
        if item.module is request.module and cs and all(n in cs.params for n in names) \
                and will_run(item):
            out.append(tuple(cs.params[n] for n in names))
    return out


def sampled(name: str, share: int, salt: str = "") -> bool:
    """Whether `name` is in a fixed 1/share of names (by a hash, the same on every run): the
    variants of a case kept in the default suite, the others in the slow tier."""
    return zlib.crc32((salt + name).encode()) % share == 0


# the parameters that hold a test's optimization level
LEVEL_PARAMS = ("opt", "level")


def _level_of(item) -> tuple[str, str] | None:
    """(the test's name without its optimization level, the level) of a test parametrized by
    one; else None."""
    cs = getattr(item, "callspec", None)
    for p in LEVEL_PARAMS:
        if cs is not None and isinstance(cs.params.get(p), str):
            return item.nodeid.replace(cs.params[p], ""), cs.params[p]
    return None


# of the tests run at -O2 and at another level, the share whose other-level variant stays in the
# default suite (the rest go to the slow tier; the -O2 variant always runs)
UNOPTIMIZED_SHARE = 8       # -O0
OTHER_LEVEL_SHARE = 2       # -O1, -O3, -Os, -Oz, -Og
OTHER_LEVELS = ("-O1", "-O3", "-Os", "-Oz", "-Og")


def _sample_unoptimized(items):
    """A test run at -O2 and at other levels keeps its -O0 variant in the default suite for a
    fixed eighth of such tests, and its -O1/-O3/-Os/-Oz/-Og variant for a fixed half (by a hash
    of the name: the same tests on every run); the others go to the slow tier."""
    found = [(item, _level_of(item)) for item in items]
    levels: dict[str, set] = {}
    for _, nl in found:
        if nl is not None:
            levels.setdefault(nl[0], set()).add(nl[1])
    for item, nl in found:
        if nl is None or "-O2" not in levels[nl[0]]:
            continue
        if nl[1] == "-O0" and not sampled(nl[0], UNOPTIMIZED_SHARE) or \
                nl[1] in OTHER_LEVELS and not sampled(nl[0], OTHER_LEVEL_SHARE, nl[1]):
            item.add_marker(pytest.mark.slow)


def pytest_collection_modifyitems(config, items):
    """Tests marked `slow` (slower variants of cases the suite covers otherwise, and the -O0
    variants that _sample_unoptimized leaves out) run only with ENZYME_CC_SLOW=1, so that the
    default suite stays within its time on 2 cores."""
    if os.environ.get("ENZYME_CC_SLOW") == "1":
        return
    _sample_unoptimized(items)
    skip = pytest.mark.skip(reason="slow tier: run with ENZYME_CC_SLOW=1")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
