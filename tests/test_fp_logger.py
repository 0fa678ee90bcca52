"""Enzyme's FPOpt logger callbacks (enzyme_cc/ad/api/fp_logger.py).

Each program in fp_logger/ is built twice: with -DLOGGER it defines the callbacks and checks what
they receive (call counts, logged results, operands, errors and adjoints against values it
computes itself) in `CHECK name got expected` lines; without, it only prints its RESULT lines
(derivatives and error estimates as hex floats), which must be the same in both builds: logging
changes no derivative."""
import os
import shutil

import pytest

from conftest import BIN, run

HERE = os.path.join(os.path.dirname(__file__), "fp_logger")
PROGRAMS = {"error_log.c": 24, "grad_log.cpp": 30, "long_form.c": 30}


def _build(tmp_path, prog, opt, logger, flags=(), runner=()):
    src = tmp_path / prog
    shutil.copy(os.path.join(HERE, prog), src)
    driver = "enzyme-c++" if prog.endswith(".cpp") else "enzyme-cc"
    exe = tmp_path / ("logged" if logger else "plain")
    env = dict(os.environ)
    if opt.endswith("-ref"):          # AD of unoptimized IR: variables in stack slots
        opt, env["ENZYME_CC_PREOPT"] = opt[:-4], "0"
    run([driver, opt, *flags, *(["-DLOGGER"] if logger else []), str(src), "-lm", "-o",
         str(exe)], cwd=tmp_path, env=env)
    return run([*runner, str(exe)], cwd=tmp_path).stdout


@pytest.mark.parametrize("opt", ["-O0", "-O2", "-O2-ref"])
@pytest.mark.parametrize("prog", sorted(PROGRAMS))
def test_logger_program(tmp_path, prog, opt):
    logged = _build(tmp_path, prog, opt, True)
    checks = [line for line in logged.splitlines() if line.startswith("CHECK ")]
    assert not [c for c in checks if "FAILED" in c], logged
    assert len(checks) >= PROGRAMS[prog], logged
    plain = _build(tmp_path, prog, opt, False)
    results = [line for line in logged.splitlines() if line.startswith("RESULT ")]
    assert results and results == [line for line in plain.splitlines()
                                   if line.startswith("RESULT ")]


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
@pytest.mark.parametrize("prog", sorted(PROGRAMS))
def test_logger_program_g_valgrind(tmp_path, prog):
    """With -g (callbacks with debug info called from derivatives without: not inlined there) and
    the operand arrays on the stack: no invalid access, nothing definitely lost."""
    out = _build(tmp_path, prog, "-O2", True, flags=("-g",),
                 runner=("valgrind", "-q", "--error-exitcode=1", "--leak-check=full",
                         "--errors-for-leak-kinds=definite"))
    assert "CHECK " in out and "FAILED" not in out, out


UNKNOWN = """
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
int grads;
void enzymeLogGrad(double grad, int id) { grads++; }
double f(double x) { return x * x; }
int main(void) { printf("%g %d\\n", __enzyme_autodiff((void *)f, 3.0), grads); return 0; }
"""


@pytest.mark.parametrize("name", ["logger.c", "logger.cpp"])
def test_unknown_callback_signature_is_an_error(tmp_path, name):
    """A callback named like Enzyme's but of none of its forms: an error naming it and its
    signature, with the forms it could have."""
    src = tmp_path / name
    src.write_text(UNKNOWN)
    driver = "enzyme-c++" if name.endswith(".cpp") else "enzyme-cc"
    r = run([os.path.join(BIN, driver), "-O2", str(src), "-o", str(tmp_path / "p")], check=False)
    assert r.returncode != 0
    assert "enzyme-" in r.stderr and "error:" in r.stderr and "Traceback" not in r.stderr
    assert "enzymeLogGrad" in r.stderr and "(double, i32)" in r.stderr, r.stderr
    assert "hint: declare it as void enzymeLogGrad(const char *id, double grad)" in r.stderr


def test_callbacks_are_not_differentiated(tmp_path):
    """A differentiated function may call a callback itself: the call carries no derivative."""
    src = tmp_path / "direct.c"
    src.write_text("""
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
int errs;
double last;
void enzymeLogError(const char *id, double err) { errs++; last = err; }
double f(double x) { enzymeLogError("mine", x * 1e-3); return x * x * x; }
int main(void) {
  double d = __enzyme_autodiff((void *)f, 2.0);
  printf("%g %d %g\\n", d, errs, last);
  return !(d == 12.0 && errs == 1 && last == 2e-3);
}
""")
    run([os.path.join(BIN, "enzyme-cc"), "-O0", str(src), "-o", str(tmp_path / "p")])
    run([str(tmp_path / "p")])
