"""BLAS adjoints and tangents (rules/blas.py) against finite differences, through OpenBLAS."""
import os
import shutil

import pytest

from conftest import run

SRC = os.path.join(os.path.dirname(__file__), "blas", "blas_check.c")
HAVE_CBLAS = os.path.exists("/usr/include/x86_64-linux-gnu/cblas.h") or os.path.exists(
    "/usr/include/cblas.h")


@pytest.mark.skipif(not HAVE_CBLAS, reason="libopenblas-dev is not installed (scripts/setup.sh installs it)")
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_blas_gradients(tmp_path, opt):
    src = tmp_path / "blas_check.c"
    shutil.copy(SRC, src)
    exe = tmp_path / "blas_check"
    run(["enzyme-cc", opt, str(src), "-lopenblas", "-lm", "-o", str(exe)], cwd=tmp_path)
    r = run([str(exe)], cwd=tmp_path, check=False)
    checks = [line for line in r.stdout.splitlines() if line.startswith("CHECK")]
    assert len(checks) == 35 and r.returncode == 0, r.stdout
