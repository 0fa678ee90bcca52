"""Forward, vector, split, higher-order modes, indirect calls and Enzyme's C++ interface.

Each program prints lines `got... | expected...`; the test compares the numbers on both sides
(and the dot-product test <J v, g> for forward against reverse)."""
import os
import shutil

import pytest

from conftest import run, floats

HERE = os.path.join(os.path.dirname(__file__), "modes")
PROGRAMS = ["forward.c", "hvp.c", "hvp_repeat.c", "higher_order.c", "saddle.cpp", "particle.cpp", "split.c", "split_allocated.c", "vector.c", "vector_calls.c", "vector_indirect.c", "indirect.c", "cxx_api.cpp", "cxx_api_refs.cpp", "width_dupnoneed.c", "registrations.c", "allocation_like.c", "cxx_sret.cpp"]


def _pairs(out: str):
    for line in out.splitlines():
        if "|" in line:
            got, want = line.split("|", 1)
            yield line, floats(got)[-len(floats(want)):] if floats(want) else [], floats(want)
        elif "Jv" in line:                       # Jv <value>  <g,v> <value>
            a, b = floats(line)[-2:]
            yield line, [a], [b]
        elif line.startswith(("which", "norm")):
            vals = floats(line.split(":", 1)[1]) if ":" in line else floats(line)
            yield line, vals[0::2], vals[1::2]


@pytest.mark.parametrize("opt", ["-O0", "-Og", "-O2", "-O3"])
@pytest.mark.parametrize("prog", PROGRAMS)
def test_mode_program(tmp_path, prog, opt):
    src = tmp_path / prog
    shutil.copy(os.path.join(HERE, prog), src)
    driver = "enzyme-c++" if prog.endswith(".cpp") else "enzyme-cc"
    exe = tmp_path / "prog"
    extra = ["-std=c++17"] if prog.endswith(".cpp") else []
    run([driver, opt, *extra, str(src), "-lm", "-o", str(exe)], cwd=tmp_path)
    out = run([str(exe)], cwd=tmp_path).stdout
    checked = 0
    for line, got, want in _pairs(out):
        assert got == pytest.approx(want, rel=1e-5, abs=1e-6), line
        checked += 1
    assert checked >= 1, out


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("prog", ["hvp_repeat.c", "cxx_sret.cpp"])
def test_mode_program_valgrind(tmp_path, prog, opt):
    """Repeated higher-order derivative calls, objects returned through sret with their tangent
    objects: no invalid access, nothing definitely lost."""
    src = tmp_path / prog
    shutil.copy(os.path.join(HERE, prog), src)
    exe = tmp_path / "prog"
    driver = ["enzyme-c++", "-std=c++17"] if prog.endswith(".cpp") else ["enzyme-cc"]
    run([*driver, opt, "-g", str(src), "-lm", "-o", str(exe)], cwd=tmp_path)
    run(["valgrind", "-q", "--error-exitcode=1", "--leak-check=full",
         "--errors-for-leak-kinds=definite", str(exe)], cwd=tmp_path)
