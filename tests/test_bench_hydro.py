"""The hydrodynamics benchmark's gradients are right (bench/hydro.py, issue 26): at n = 4 and 10
steps, the serial, OpenMP (2 threads) and MPI (2 ranks, when Open MPI is installed) builds and the
ADOL-C peer (when libadolc-dev is installed) agree with central finite differences on 10
components, and the 2-rank gradient with the 1-rank one on every component. No wall time is
asserted."""
import os
import re
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from bench import hydro  # noqa: E402

VARIANTS = ["serial", "openmp", "mpi", "adolc"]


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory() as d:
        yield d


@pytest.mark.parametrize("variant", VARIANTS)
def test_gradient_matches_finite_differences(variant, workdir):
    if variant not in hydro.available():
        pytest.skip({"mpi": "Open MPI (mpicc, mpirun) not installed",
                     "adolc": "libadolc-dev not installed"}[variant])
    exes = hydro.build(workdir, [variant])
    runs = hydro.check(exes, n=4, steps=10, threads=(2,), ranks=(2,), cwd=workdir)
    assert len(runs) == 1
    label, ok, out = runs[0]
    assert ok, f"{label}:\n{out}"
    fd = [float(x) for x in re.findall(r"FD \S+ rel\. error (\S+)", out)]
    assert len(fd) >= 6, out
    assert max(fd) < 1e-5, out
    if variant == "mpi":
        m = re.search(r"max rel\. error (\S+) \(energies\) (\S+) \(velocities\)", out)
        assert m and max(map(float, m.groups())) < 1e-9, out
