"""The compiled fast path of the compile step (enzyme_cc/launcher.py, launcher/launcher.c).

Two launchers are built into temporary directories: `fast`, whose Python fallback does not exist
(so a command that it does not handle itself fails with exit 127, which shows the path taken),
and `real`, as setup installs it. The fast path must produce byte-identical objects and dependency
files to the Python driver's, and hand everything else to the Python driver unchanged."""
import os
import shutil
import sys

import pytest

from conftest import run
from enzyme_cc import launcher

PY_DRIVER = [sys.executable, "-m", "enzyme_cc.cli"]


@pytest.fixture(scope="module")
def bins(tmp_path_factory):
    fast = tmp_path_factory.mktemp("fast")
    real = tmp_path_factory.mktemp("real")
    launcher.install(str(fast), python="/nonexistent/python3")
    launcher.install(str(real))
    return fast, real


@pytest.fixture()
def work(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "scale.h").write_text("#define SCALE 3.0\n")
    (tmp_path / "f.c").write_text(
        '#include "scale.h"\n'
        "double f(double x) { return SCALE * x * x + OFFSET; }\n")
    (tmp_path / "g.cpp").write_text(
        "#include <vector>\n"
        "extern \"C\" double g(const double *x, int n) {\n"
        "  std::vector<double> v(x, x + n); double s = 0;\n"
        "  for (double e : v) s += e * e;\n  return s;\n}\n")
    (tmp_path / "main.c").write_text(
        "#include <stdio.h>\n"
        "double f(double);\ndouble __enzyme_autodiff(void *, double);\n"
        "int main(void) {\n"
        "  double d = __enzyme_autodiff((void *)f, 2.0);\n"
        "  printf(\"%.12g\\n\", d);\n  return d == 12.0 ? 0 : 1;\n}\n")
    return tmp_path


def env_without_enzyme():
    return {k: v for k, v in os.environ.items() if not k.startswith("ENZYME_CC_")}


FAST_CASES = [
    ("enzyme-cc", ["-O2", "-c", "f.c", "-o", "f.o", "-Iinc", "-DOFFSET=1.0"]),
    ("enzyme-cc", ["-O3", "-g", "-fPIC", "-std=c11", "-Wall", "-I", "inc", "-D", "OFFSET=2",
                   "-MD", "-MF", "f.d", "-MT", "f.o", "-c", "f.c", "-o", "f.o"]),
    ("enzyme-cc", ["-Os", "-MMD", "-MP", "-Iinc", "-DOFFSET=0", "-c", "-o", "f.o", "f.c"]),
    ("enzyme-c++", ["-O2", "-std=c++17", "-march=x86-64", "-c", "g.cpp", "-o", "g.o"]),
]


@pytest.mark.parametrize("driver, args", FAST_CASES)
def test_fast_path_matches_python_driver(bins, work, driver, args):
    fast, _ = bins
    env = env_without_enzyme()
    r = run([str(fast / driver), *args], cwd=work, env=env)
    assert r.stderr == ""
    outputs = [a for a in ("f.o", "g.o", "f.d") if (work / a).exists()]
    assert outputs
    saved = {a: (work / a).read_bytes() for a in outputs}
    for a in outputs:
        (work / a).unlink()
    run(PY_DRIVER + [driver.replace("enzyme-cc", "clang").replace("enzyme-c++", "clang++"),
                     *args], cwd=work, env=env)
    for a in outputs:
        assert (work / a).read_bytes() == saved[a], a
    o = saved.get("f.o") or saved["g.o"]
    assert b".enzyme.bc" in o      # (the old name stays in the string table, unused)


@pytest.mark.parametrize("args", [
    ["-c", "f.c", "-o", "f.o", "-Iinc", "-DOFFSET=1"],              # no -O: -O0's two jobs
    ["-O0", "-c", "f.c", "-o", "f.o", "-Iinc", "-DOFFSET=1"],
    ["-O2", "-c", "f.c", "-Iinc", "-DOFFSET=1"],                      # default output name
    ["-O2", "-E", "f.c", "-Iinc"],
    ["-O2", "-flto", "-c", "f.c", "-o", "f.o", "-Iinc", "-DOFFSET=1"],
    ["-O2", "-fopenmp", "-c", "f.c", "-o", "f.o", "-Iinc", "-DOFFSET=1"],
    ["-O2", "-x", "c", "-c", "f.c", "-o", "f.o", "-Iinc", "-DOFFSET=1"],
    ["-O2", "-c", "f.c", "main.c"],
    ["-O2", "f.c", "-o", "prog"],
    ["-O2", "main.o", "-o", "prog"],                                # no such file: clang's error
    ["-O2", "-c", "missing.c", "-o", "m.o"],
    ["-O2", "-v", "-c", "f.c", "-o", "f.o"],
    ["@args.rsp"],
])
def test_other_commands_go_to_python(bins, work, args):
    fast, _ = bins
    r = run([str(fast / "enzyme-cc"), *args], cwd=work, check=False, env=env_without_enzyme())
    assert r.returncode == 127 and "cannot run the Python driver" in r.stderr


def test_environment_and_config_go_to_python(bins, work):
    fast, _ = bins
    args = [str(fast / "enzyme-cc"), "-O2", "-c", "f.c", "-o", "f.o", "-Iinc", "-DOFFSET=1"]
    r = run(args, cwd=work, check=False, env={**env_without_enzyme(), "ENZYME_CC_CLANG": "x"})
    assert r.returncode == 127
    r = run(args, cwd=work, check=False, env={**env_without_enzyme(), "ENZYME_CC_CACHE": "0"})
    assert r.returncode == 0                                  # the link step's own setting
    (work / "enzyme.toml").write_text("[ad]\npreopt = true\n")
    r = run(args, cwd=work, check=False, env=env_without_enzyme())
    assert r.returncode == 127


def test_compile_error_is_clangs(bins, work):
    fast, _ = bins
    (work / "bad.c").write_text("int main(void) { return }\n")
    e = run([str(fast / "enzyme-cc"), "-O2", "-c", "bad.c", "-o", "bad.o"], cwd=work,
            check=False, env=env_without_enzyme())
    c = run(["clang-22", "-O2", "-c", "bad.c", "-o", "bad.o"], cwd=work, check=False)
    assert e.returncode == c.returncode == 1
    assert "error: expected expression" in e.stderr
    assert e.stderr.replace(str(work) + "/", "") == c.stderr.replace(str(work) + "/", "")


def test_fast_objects_differentiate_at_link(bins, work):
    """Objects from the fast path feed the link step's AD (which the real launcher hands to
    Python), with the attribute plugin and our headers in place."""
    _, real = bins
    env = env_without_enzyme()
    cc = str(real / "enzyme-cc")
    run([cc, "-O2", "-c", "f.c", "-o", "f.o", "-Iinc", "-DOFFSET=1"], cwd=work, env=env)
    run([cc, "-O2", "-c", "main.c", "-o", "main.o"], cwd=work, env=env)
    run([cc, "-O2", "f.o", "main.o", "-o", "prog"], cwd=work, env=env)
    r = run([str(work / "prog")], cwd=work)
    assert r.stdout.strip() == "12"


def test_link_without_markers_is_clangs(bins, work):
    """A link of objects and archives none of which names a marker runs clang directly (the
    fast launcher, whose Python is missing, succeeds); an object or a -l archive that names one
    goes to the Python link step (exit 127 there)."""
    fast, real = bins
    env = env_without_enzyme()
    cc = str(real / "enzyme-cc")
    (work / "plain.c").write_text('#include <stdio.h>\ndouble f(double);\n'
                                  'int main(void) { printf("%g\\n", f(2.0)); return 0; }\n')
    for src in ("f.c", "plain.c", "main.c"):
        run([cc, "-O2", "-c", src, "-Iinc", "-DOFFSET=1"], cwd=work, env=env)
    run(["llvm-ar-22", "rcs", "libf.a", "f.o"], cwd=work)
    run(["llvm-ar-22", "rcs", "libm2.a", "main.o"], cwd=work)
    fcc = str(fast / "enzyme-cc")
    for args in (["plain.o", "f.o"], ["-L.", "plain.o", "-lf", "-lm"],
                 ["plain.o", "-L", ".", "-l", "f", "-Wl,--as-needed", "-pthread"]):
        run([fcc, "-O2", *args, "-o", "prog"], cwd=work, env=env)
        assert run([str(work / "prog")], cwd=work).stdout.strip() == "13"
    for args in (["main.o", "f.o"], ["f.o", "-L.", "-lm2"], ["f.o", "main.c"],
                 ["-O2", "plain.o", "f.o", "-fopenmp"]):
        r = run([fcc, *args, "-o", "prog"], cwd=work, check=False, env=env)
        assert r.returncode == 127 and "cannot run the Python driver" in r.stderr, args
    # the link step's own settings allow it; others and an enzyme.toml go to Python
    r = run([fcc, "plain.o", "f.o", "-o", "prog"], cwd=work, check=False,
            env={**env, "ENZYME_CC_CACHE": "0"})
    assert r.returncode == 0
    r = run([fcc, "plain.o", "f.o", "-o", "prog"], cwd=work, check=False,
            env={**env, "ENZYME_CC_CLANG": "x"})
    assert r.returncode == 127


def test_install_is_idempotent_and_replaces_scripts(tmp_path):
    for name in launcher.NAMES:
        (tmp_path / name).write_text("#!/bin/sh\nexit 9\n")
    assert launcher.install(str(tmp_path)) is True
    assert launcher.install(str(tmp_path)) is False
    for name in launcher.NAMES:
        assert (tmp_path / name).read_bytes()[:4] == b"\x7fELF"
    r = run([str(tmp_path / "enzyme-cc"), "--version"], check=False)
    assert r.returncode == 0 and "clang version 22" in r.stdout
    assert shutil.which("clang-22")


# ---- Fortran -----------------------------------------------------------------------------
FORTRAN = """\
module scaling
  implicit none
  real(8), parameter :: factor = SCALE_BY
end module
function h(x) result(y) bind(c, name="h")
  use scaling
  real(8), value :: x
  real(8) :: y
  y = factor * x * x
end function
"""
FORTRAN_MAIN = """\
#include <stdio.h>
double h(double);
double __enzyme_autodiff(void *, double);
int main(void) {
  double d = __enzyme_autodiff((void *)h, 2.0);
  printf("%.12g\\n", d);
  return d == 12.0 ? 0 : 1;
}
"""


@pytest.fixture()
def fwork(tmp_path):
    (tmp_path / "h.F90").write_text(FORTRAN)
    (tmp_path / "mods").mkdir()
    (tmp_path / "ompi").mkdir()
    (tmp_path / "ompi" / "mpif-sizeof.h").write_text("")
    (tmp_path / "main.c").write_text(FORTRAN_MAIN)
    return tmp_path


@pytest.mark.parametrize("args", [
    ["-O2", "-DSCALE_BY=3.0d0", "-c", "h.F90", "-o", "h.o"],
    ["-O0", "-g", "-fPIC", "-cpp", "-D", "SCALE_BY=3.0d0", "-J", "mods", "-c", "h.F90", "-o",
     "h.o"],
    ["-O3", "-ffree-form", "-march=x86-64", "-DSCALE_BY=3.0d0", "-module-dir", "mods", "-c",
     "-o", "h.o", "h.F90"],
])
def test_fortran_fast_path_matches_python_driver(bins, fwork, args):
    """enzyme-fc's compile step without Python: the same object, byte for byte (flang's IR in
    .enzyme.bc), and flang's module files where the options put them."""
    fast, _ = bins
    env = env_without_enzyme()
    r = run([str(fast / "enzyme-fc"), *args], cwd=fwork, env=env)
    assert r.stderr == ""
    saved = (fwork / "h.o").read_bytes()
    assert b".enzyme.bc" in saved
    (fwork / "h.o").unlink()
    run(PY_DRIVER + ["flang", *args], cwd=fwork, env=env)
    assert (fwork / "h.o").read_bytes() == saved
    assert (fwork / ("mods" if "mods" in args else ".") / "scaling.mod").exists()


@pytest.mark.parametrize("args", [
    ["-O2", "-fopenmp", "-DSCALE_BY=3.0d0", "-c", "h.F90", "-o", "h.o"],
    ["-O2", "-DSCALE_BY=3.0d0", "-c", "h.F90"],                      # default output name
    ["-O2", "-DSCALE_BY=3.0d0", "-E", "h.F90"],
    ["-O2", "-DSCALE_BY=3.0d0", "-c", "h.F90", "-o", "h.o", "-v"],
    ["-O2", "h.o", "-o", "prog"],                                   # links: Python
    # Open MPI's Fortran headers (fortran_mpi_headers.py)
    ["-O2", "-Iompi", "-DSCALE_BY=3.0d0", "-c", "h.F90", "-o", "h.o"],
    ["-O2", "-I", "ompi", "-DSCALE_BY=3.0d0", "-c", "h.F90", "-o", "h.o"],
])
def test_fortran_other_commands_go_to_python(bins, fwork, args):
    fast, _ = bins
    r = run([str(fast / "enzyme-fc"), *args], cwd=fwork, check=False, env=env_without_enzyme())
    assert r.returncode == 127 and "cannot run the Python driver" in r.stderr


USES_MPI = """\
module comm
  use mpi
  implicit none
contains
  integer function world() bind(c, name="world")
    world = MPI_COMM_WORLD
  end function
end module
"""


def _ompi_fortran_include():
    """Open MPI's Fortran include directory (gfortran's mpif.h and mpi.mod), where installed."""
    if not shutil.which("mpif90"):
        return None
    r = run(["mpif90", "--showme:incdirs"], check=False)
    for d in r.stdout.split():
        if os.path.isfile(os.path.join(d, "mpif-sizeof.h")):
            return d
    return None


@pytest.mark.parametrize("headers", ["open-mpi", "readable"])
def test_fortran_mpi_header_directory_found_without_python(bins, fwork, headers):
    """Once the Python driver has decided about a set of Open MPI Fortran headers (our
    directory first, or theirs as they are: fortran_mpi_headers.py), the launcher finds that
    decision in the cache and compiles without Python: the same object, byte for byte."""
    fast, _ = bins
    if headers == "open-mpi":
        inc = _ompi_fortran_include()
        if inc is None:
            pytest.skip("Open MPI's Fortran headers are not installed")
        (fwork / "h.F90").write_text(USES_MPI)
    else:                               # headers flang reads as they are: verdict "none"
        inc = str(fwork / "ompi")
        (fwork / "ompi" / "mpif.h").write_text("      integer, parameter :: ONE = 1\n")
    env = dict(env_without_enzyme(), XDG_CACHE_HOME=str(fwork / "cache"))
    args = ["-O2", "-I" + inc, "-DSCALE_BY=3.0d0", "-c", "h.F90", "-o", "h.o"]
    r = run([str(fast / "enzyme-fc"), *args], cwd=fwork, check=False, env=env)
    assert r.returncode == 127 and "cannot run the Python driver" in r.stderr   # not decided
    run(PY_DRIVER + ["flang", *args], cwd=fwork, env=env)
    saved = (fwork / "h.o").read_bytes()
    (fwork / "h.o").unlink()
    verdicts = list((fwork / "cache" / "enzyme-cc" / "fortran-mpi").glob("*/verdict"))
    assert [v.read_text() for v in verdicts] == \
        ["shim\n" if headers == "open-mpi" else "none\n"]
    r = run([str(fast / "enzyme-fc"), *args], cwd=fwork, env=env)
    assert r.stderr == "" and (fwork / "h.o").read_bytes() == saved


def test_fortran_fast_path_errors_and_link(bins, fwork):
    """A compile error is flang's (exit status and message, none of the opt-bisect reports); the
    fast path's object differentiates at the link."""
    fast, real = bins
    env = env_without_enzyme()
    (fwork / "bad.f90").write_text("subroutine bad(\n")
    r = run([str(fast / "enzyme-fc"), "-O2", "-c", "bad.f90", "-o", "bad.o"], cwd=fwork,
            check=False, env=env)
    assert r.returncode == 1 and "error" in r.stderr and "BISECT" not in r.stderr
    assert not list(fwork.glob("bad.o"))
    run([str(fast / "enzyme-fc"), "-O2", "-DSCALE_BY=3.0d0", "-c", "h.F90", "-o", "h.o"],
        cwd=fwork, env=env)
    run([str(real / "enzyme-cc"), "-O2", "-c", "main.c", "-o", "main.o"], cwd=fwork, env=env)
    run([str(real / "enzyme-fc"), "-O2", "main.o", "h.o", "-o", "prog"], cwd=fwork, env=env)
    assert run([str(fwork / "prog")], cwd=fwork).stdout.strip() == "12"
