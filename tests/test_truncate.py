"""Enzyme's truncation API (ad/api/truncate.py): programs in tests/truncate/ print
`CHECK name got want` lines (bit-exact where the narrow computation is defined exactly) and exit
non-zero on a mismatch; each is built at -O0 and -O2 without -lmpfr (enzyme-cc links MPFR when
the runtime is needed). Unsupported uses are link-time errors naming the function and line."""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import BIN, run

HERE = Path(__file__).resolve().parent / "truncate"
PROGRAMS = ["native.c", "mpfr_auto.c", "mpfr_direct.c", "user_fprt.c", "template.cpp"]
CHECK = re.compile(r"^CHECK (\S+) (\S+) (\S+)")


def _build(tmp_path, prog, flags):
    shutil.copy(HERE / "check.h", tmp_path / "check.h")
    src = tmp_path / prog
    shutil.copy(HERE / prog, src)
    driver = "enzyme-c++" if prog.endswith(".cpp") else "enzyme-cc"
    exe = tmp_path / (prog + ".out")
    run([os.path.join(BIN, driver), *flags, str(src), "-lm", "-o", str(exe)], cwd=tmp_path)
    return exe


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("prog", PROGRAMS)
def test_truncate_program(tmp_path, prog, opt):
    exe = _build(tmp_path, prog, [opt])
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    checks = [line for line in r.stdout.splitlines() if CHECK.match(line)]
    assert r.returncode == 0 and "FAILED" not in r.stdout, r.stdout + r.stderr
    assert len(checks) >= 3, r.stdout


@pytest.mark.parametrize("prog", PROGRAMS)
def test_truncate_ref_pipeline(tmp_path, monkeypatch, prog):
    """Unoptimized IR (ENZYME_CC_PREOPT=0): every value in memory, every helper a call."""
    monkeypatch.setenv("ENZYME_CC_PREOPT", "0")
    exe = _build(tmp_path, prog, ["-O0"])
    r = run([str(exe)])
    assert "FAILED" not in r.stdout and "CHECK" in r.stdout


def test_truncate_debug_info_with_runtime_header(tmp_path):
    """Enzyme's way of building: `-include enzyme/fprt/mpfr.h` in C++ with -g. The runtime makes
    the module large enough for split code generation, whose parts once lost the static
    variables and strings that the debug info names (undefined `.str` at link)."""
    exe = _build(tmp_path, "template.cpp", ["-O2", "-g", "-include", "enzyme/fprt/mpfr.h"])
    r = run([str(exe)])
    assert "FAILED" not in r.stdout


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
@pytest.mark.parametrize("prog", ["native.c", "mpfr_direct.c"])
def test_truncate_valgrind(tmp_path, prog):
    """Op mode through the MPFR runtime frees its temporaries; the inline formats touch no
    memory of their own. (Mem mode through the runtime keeps every value, as in Enzyme.)"""
    exe = _build(tmp_path, prog, ["-O2", "-g"])
    run(["valgrind", "-q", "--error-exitcode=1", "--leak-check=full",
         "--errors-for-leak-kinds=definite", str(exe)], cwd=tmp_path)


HEAD = """\
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdint.h>
void *__enzyme_truncate_op_func(void *, int, int, ...);
void *__enzyme_truncate_mem_func(void *, int, int, ...);
double __enzyme_autodiff(void *, ...);
typedef double (*F)(double);
"""
ERRORS = {
    # name: (body, names the error must quote, text on the line it must point at)
    "mem_external_call": ("""
static double show(double v) { printf("%f\\n", v); return v; }
int main(void) { return ((F)__enzyme_truncate_mem_func((void *)show, 64, 32))(1.0) > 0; }
""", ("show", "printf"), 'printf("%f'),
    "mem_bit_reinterpretation": ("""
static double bits(double v) { uint64_t b; memcpy(&b, &v, 8); b ^= 1; memcpy(&v, &b, 8); return v; }
int main(void) { return ((F)__enzyme_truncate_mem_func((void *)bits, 64, 32))(1.0) > 0; }
""", ("bits",), "uint64_t b;"),
    "unknown_width": ("""
static double sq(double v) { return v * v; }
int main(void) { return ((F)__enzyme_truncate_op_func((void *)sq, 64, 24))(1.0) > 0; }
""", ("__enzyme_truncate_op_func", "main"), "__enzyme_truncate_op_func((void *)sq"),
    "wider_target": ("""
static double sq(double v) { return v * v; }
int main(void) { return ((F)__enzyme_truncate_op_func((void *)sq, 32, 11, 52))(1.0) > 0; }
""", ("main",), "__enzyme_truncate_op_func((void *)sq"),
    "runtime_width": ("""
static double sq(double v) { return v * v; }
int main(int argc, char **argv) {
  return ((F)__enzyme_truncate_op_func((void *)sq, 64, argc > 1 ? 16 : 32))(1.0) > 0;
}
""", ("__enzyme_truncate_op_func", "main"), "__enzyme_truncate_op_func((void *)sq"),
    "mem_mode_differentiated": ("""
static double sq(double v) { return v * v; }
double h(double x) { return ((F)__enzyme_truncate_mem_func((void *)sq, 64, 32))(x) * x; }
int main(void) { printf("%f\\n", __enzyme_autodiff((void *)h, 2.0)); return 0; }
""", ("sq", "h"), "__enzyme_truncate_mem_func((void *)sq"),
    "runtime_format_differentiated": ("""
static double sq(double v) { return v * v; }
double h(double x) { return ((F)__enzyme_truncate_op_func((void *)sq, 64, 8, 12))(x) * x; }
int main(void) { printf("%f\\n", __enzyme_autodiff((void *)h, 2.0)); return 0; }
""", ("sq", "h"), "__enzyme_truncate_op_func((void *)sq"),
}


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("case", sorted(ERRORS))
def test_truncate_error(tmp_path, case, opt):
    body, names, marker = ERRORS[case]
    text = HEAD + body
    src = tmp_path / f"{case}.c"
    src.write_text(text)
    exe = tmp_path / "out"
    env = dict(os.environ)
    env.pop("ENZYME_CC_DEBUG", None)
    r = subprocess.run([os.path.join(BIN, "enzyme-cc"), opt, "-g", str(src), "-lm", "-o",
                        str(exe)], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode != 0 and not exe.exists(), r.stdout + r.stderr
    assert "enzyme-cc: error:" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert "hint:" in r.stderr, r.stderr
    for name in names:
        assert f"'{name}'" in r.stderr, r.stderr
    line = next(k for k, s in enumerate(text.splitlines(), 1) if marker in s)
    assert f"{case}.c:{line}" in r.stderr, r.stderr
