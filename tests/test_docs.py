"""The user guide (docs/, a mkdocs site): it builds in strict mode (no broken link or anchor),
and every example on its pages is compiled and run here, its output compared with the page's.

An example is a fenced block whose first line names its file (`/* file: x.c */`, `// file:`,
`# file:`); a `console` block after it runs its `$ ` lines in order (with bash, in a directory
holding the page's files) and expects the lines under each to be what the command prints.
Code blocks in a programming language without a file name are not allowed on guide pages: an
example that is not run would rot."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from test_rust import NO_RUSTC, RUSTC

DOCS = Path(ROOT) / "docs"
BIN = Path(sys.executable).parent
# the guide's pages (docs/rules.md's examples run in test_user_rules.py; performance.md,
# real_applications.md and architecture.md are notes on measurements and internals)
GUIDE = ["index.md", "getting-started.md", "api.md", "checkpointing.md", "coverage.md",
         "troubleshooting.md", "mpi.md", "rust.md", "python.md", "benchmarks.md"]
CODE = {"c", "cpp", "c++", "fortran", "rust", "python", "toml", "cmake", "sh", "bash"}
FILE = re.compile(r"(?:/\*|//|#|!) file: (\S+)")


def blocks(page):
    """[(language, file name or None, body)] of the fenced blocks of a page."""
    text = (DOCS / page).read_text()
    out = []
    for lang, body in re.findall(r"^```([\w+-]*)\n(.*?)^```", text, re.S | re.M):
        m = FILE.match(body)
        out.append((lang, m.group(1) if m else None, body))
    return out


def _needs(page):
    """Why a page's examples cannot run here, or None."""
    if page == "rust.md" and RUSTC is None:
        return NO_RUSTC
    if page == "mpi.md" and shutil.which("mpicc") is None:
        return "no Open MPI (mpicc)"
    if page == "python.md":
        try:
            import torch  # noqa: F401
        except ImportError:
            return "torch is not installed"
    return None


def test_guide_builds_strict(tmp_path):
    mkdocs = shutil.which("mkdocs", path=str(BIN)) or shutil.which("mkdocs")
    assert mkdocs, "mkdocs is a test dependency (pip install -e '.[test]')"
    r = subprocess.run([mkdocs, "build", "--strict", "-d", str(tmp_path / "site")], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("page", GUIDE)
def test_guide_code_is_examples(page):
    """Every code block of a guide page is a named file of a run example."""
    unnamed = [body.splitlines()[0] if body else "" for lang, name, body in blocks(page)
               if lang in CODE and name is None]
    assert unnamed == [], f"{page}: code blocks without a `file:` name: {unnamed}"


@pytest.mark.parametrize("page", [p for p in GUIDE if any(lang == "console" for lang, _, _ in
                                                          blocks(p))])
def test_guide_examples_run(page, tmp_path):
    why = _needs(page)
    if why:
        pytest.skip(why)
    for _, name, body in blocks(page):
        if name:
            (tmp_path / name).write_text(body)
    path = os.pathsep.join([str(BIN)] + ([str(Path(RUSTC).parent)] if RUSTC else []) +
                           [os.environ.get("PATH", "")])
    env = dict(os.environ, PATH=path, ENZYME_CC_CACHE="0",
               # mpirun as root, and more ranks than cores
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    env.pop("ENZYME_CC_CONFIG", None)
    for lang, _, body in blocks(page):
        if lang != "console":
            continue
        lines = body.splitlines()
        for i, line in enumerate(lines):
            if not line.startswith("$ "):
                continue
            expected = []
            for nxt in lines[i + 1:]:
                if nxt.startswith("$ "):
                    break
                expected.append(nxt.rstrip())
            r = subprocess.run(["bash", "-c", line[2:]], cwd=tmp_path, env=env,
                               capture_output=True, text=True, timeout=600)
            assert r.returncode == 0, f"{page}: `{line[2:]}` failed:\n{r.stdout}\n{r.stderr}"
            got = [x.rstrip() for x in r.stdout.splitlines()]
            assert got == expected, f"{page}: `{line[2:]}` printed\n{r.stdout}"
