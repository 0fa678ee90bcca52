"""BLAS adjoints and tangents (rules/blas.py) against finite differences, through OpenBLAS."""
import os
import shutil

import pytest

from conftest import run

HERE = os.path.join(os.path.dirname(__file__), "blas")
# program -> number of CHECK lines it prints
PROGRAMS = {"blas_check.c": 35, "fortran_blas_check.c": 18, "blas_overwrite.c": 51}
HAVE_CBLAS = os.path.exists("/usr/include/x86_64-linux-gnu/cblas.h") or os.path.exists(
    "/usr/include/cblas.h")


@pytest.mark.skipif(not HAVE_CBLAS, reason="libopenblas-dev is not installed (scripts/setup.sh installs it)")
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("prog", sorted(PROGRAMS))
def test_blas_gradients(tmp_path, prog, opt):
    """CBLAS (ddot dnrm2 daxpy dscal dcopy dgemv dgemm) and Fortran-style BLAS (ddot_ dnrm2_
    dasum_ daxpy_ dscal_ dgemv_ dger_, cblas_dasum; dtrsm_ dsyrk_ with matrices saved for a
    reverse in another function) in reverse and forward mode vs central FD."""
    src = tmp_path / prog
    shutil.copy(os.path.join(HERE, prog), src)
    exe = tmp_path / "prog"
    run(["enzyme-cc", opt, str(src), "-lopenblas", "-lm", "-o", str(exe)], cwd=tmp_path)
    r = run([str(exe)], cwd=tmp_path, check=False)
    checks = [line for line in r.stdout.splitlines() if line.startswith("CHECK")]
    assert len(checks) == PROGRAMS[prog] and r.returncode == 0, r.stdout
