"""Code the AD core cannot (or must not) differentiate fails at link time with a clang-shaped
error: `enzyme-cc: error: ...` on stderr, a non-zero exit, no Python traceback, no output file,
the function named, a hint, and with -g the source file:line of the offending call."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent

MYSTERY_LIB = "double mystery(double x) { return x * x + 1; }\n"

# each case: sources, the function the error must name, the line (1-based) it must point at
EXTERNAL = """\
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
double mystery(double);

double uses_mystery(double x) {
  return mystery(x) * x;
}

int main(void) {
  printf("%f\\n", __enzyme_autodiff((void *)uses_mystery, 2.0));
  return 0;
}
"""

TOO_FEW = """\
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
double two_args(double x, double y) { return x * y; }

int main(void) {
  printf("%f\\n", __enzyme_autodiff((void *)two_args, 2.0));
  return 0;
}
"""

OUT_ON_INT = """\
#include <stdio.h>
int enzyme_out;
double __enzyme_autodiff(void *, ...);
double scaled(double x, int k) { return x * k; }

int main(void) {
  printf("%f\\n", __enzyme_autodiff((void *)scaled, 2.0, enzyme_out, 3));
  return 0;
}
"""

TAPE_TOO_SMALL = """\
#include <stdio.h>
int enzyme_allocated, enzyme_tape;
void __enzyme_augmentfwd(void *, ...);
void square(double *x, double *y) { *y = *x * *x; }

int main(void) {
  double x = 2, dx = 0, y, dy = 1, tape[1];
  __enzyme_augmentfwd((void *)square, enzyme_allocated, 8, enzyme_tape, tape, &x, &dx, &y, &dy);
  return 0;
}
"""

TAPE_IN_AUTODIFF = """\
#include <stdio.h>
int enzyme_tape;
double __enzyme_autodiff(void *, ...);
double sq(double x) { return x * x; }

int main(void) {
  char t[64];
  printf("%f\\n", __enzyme_autodiff((void *)sq, enzyme_tape, t, 2.0));
  return 0;
}
"""

BATCH = """\
#include <stdio.h>
double __enzyme_batch(void *, ...);
double sq(double x) { return x * x; }

int main(void) {
  printf("%f\\n", __enzyme_batch((void *)sq, 2.0));
  return 0;
}
"""

ATOMIC_DOUBLE = """\
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
double sum2(const double *x, int n) {
  _Atomic double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * 2;
  return s;
}

int main(void) {
  double x[2] = {1, 2}, dx[2] = {0};
  __enzyme_autodiff((void *)sum2, x, dx, 2);
  return 0;
}
"""

UNKNOWN_ENTRY = """\
#include <stdio.h>
double unknown(double in);
extern double __enzyme_error_estimate(void *, double, double);
double g(double in) { return unknown(in); }

int main(void) {
  printf("%f\\n", __enzyme_error_estimate((void *)g, 1.0, 1.0));
  return 0;
}
"""

UNDEFINED_FN = """\
#include <stdio.h>
extern double unknown(double);
double __enzyme_fwddiff(void *, ...);

int main(void) {
  printf("%f\\n", __enzyme_fwddiff((void *)unknown, 1.0, 1.0));
  return 0;
}
"""

NULL_FN = """\
#include <stdio.h>
double __enzyme_fwddiff(void *, ...);

int main(void) {
  printf("%f\\n", __enzyme_fwddiff((void *)0, 1.0, 1.0));
  return 0;
}
"""

RUNTIME_FN = """\
#include <stdio.h>
double __enzyme_fwddiff(void *, ...);
extern void *choose_function(void);

int main(void) {
  printf("%f\\n", __enzyme_fwddiff(choose_function(), 1.0, 1.0));
  return 0;
}
"""

SRET_REVERSE = """\
#include <stdio.h>
double __enzyme_autodiff(void *, ...);
struct big { double a, b, c, d; };
struct big make(double x) { struct big r = {x, x * x, 2 * x, 3}; return r; }

int main(void) {
  printf("%f\\n", __enzyme_autodiff((void *)make, 2.0));
  return 0;
}
"""

SRET_FWD_SCALAR = """\
#include <stdio.h>
int enzyme_dup_return;
double __enzyme_fwddiff(void *, ...);
struct big { double a, b, c, d; };
struct big make(double x) { struct big r = {x, x * x, 2 * x, 3}; return r; }

int main(void) {
  printf("%f\\n", __enzyme_fwddiff((void *)make, enzyme_dup_return, 2.0, 1.0));
  return 0;
}
"""

CASES = {
    "sret_reverse": (SRET_REVERSE, ("make", "main"), "__enzyme_autodiff((void *)make"),
    "sret_forward_scalar_result": (SRET_FWD_SCALAR, ("make", "main"),
                                   "__enzyme_fwddiff((void *)make"),
    "unknown_entry_point": (UNKNOWN_ENTRY, ("__enzyme_error_estimate", "main"),
                            "__enzyme_error_estimate((void *)g"),
    "undefined_function": (UNDEFINED_FN, ("unknown", "main"), "__enzyme_fwddiff((void *)unknown"),
    "null_function": (NULL_FN, ("null", "main"), "__enzyme_fwddiff((void *)0"),
    "runtime_function": (RUNTIME_FN, ("main",), "__enzyme_fwddiff(choose_function()"),
    "atomic_cmpxchg": (ATOMIC_DOUBLE, ("sum2",), "s += x[i] * 2"),
    "tape_too_small": (TAPE_TOO_SMALL, ("main",), "__enzyme_augmentfwd((void *)square"),
    "tape_in_autodiff": (TAPE_IN_AUTODIFF, ("main",), "__enzyme_autodiff((void *)sq"),
    "batch_unsupported": (BATCH, ("main",), "__enzyme_batch((void *)sq"),
    # name: (source, names that must appear, marker text locating the line)
    "external_no_bitcode": (EXTERNAL, ("uses_mystery", "mystery"), "return mystery(x)"),
    "marker_too_few_args": (TOO_FEW, ("two_args",), "__enzyme_autodiff((void *)two_args"),
    "enzyme_out_on_int": (OUT_ON_INT, ("scaled",), "__enzyme_autodiff((void *)scaled"),
}

NO_HINT: dict = {}


def _build(tmp_path: Path, case: str, flags):
    src_text, _, _ = CASES[case]
    src = tmp_path / f"{case}.c"
    src.write_text(src_text)
    inputs = [str(src)]
    if case == "external_no_bitcode":
        lib_c = tmp_path / "mystery.c"
        lib_c.write_text(MYSTERY_LIB)
        lib_o = tmp_path / "mystery.o"
        # plain clang: an ordinary object without any bitcode
        subprocess.run(["clang-22", "-O2", "-c", str(lib_c), "-o", str(lib_o)], check=True)
        inputs.append(str(lib_o))
    exe = tmp_path / f"{case}.out"
    env = dict(os.environ, PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""))
    env.pop("ENZYME_CC_DEBUG", None)
    r = subprocess.run([str(BIN / "enzyme-cc"), *flags, *inputs, "-o", str(exe)], cwd=tmp_path,
                       capture_output=True, text=True, env=env, timeout=120)
    return r, exe


def _line_of(case: str) -> int:
    src_text, _, marker = CASES[case]
    for k, line in enumerate(src_text.splitlines(), 1):
        if marker in line:
            return k
    raise AssertionError(marker)


def _assert_clean_error(r, exe, case):
    out = r.stdout + r.stderr
    assert r.returncode != 0, f"{case}: link succeeded:\n{out}"
    assert "Traceback" not in out, out
    assert "enzyme-cc: error:" in r.stderr, out
    assert "internal error" not in out, out
    assert not exe.exists(), f"{case}: an output file was left behind"
    for name in CASES[case][1]:
        assert f"'{name}'" in r.stderr, f"{case}: error does not name '{name}':\n{r.stderr}"


@pytest.mark.parametrize("level", ["-O0", "-O2"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_error_names_function(tmp_path, case, level):
    r, exe = _build(tmp_path, case, [level])
    _assert_clean_error(r, exe, case)


@pytest.mark.parametrize("case", [
    pytest.param(c, marks=[pytest.mark.xfail(strict=True, reason=NO_HINT[c])] if c in NO_HINT else [])
    for c in sorted(CASES)])
def test_error_has_hint(tmp_path, case):
    r, exe = _build(tmp_path, case, ["-O2"])
    _assert_clean_error(r, exe, case)
    assert "hint:" in r.stderr, f"{case}: no hint in:\n{r.stderr}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_error_with_g_names_source_line(tmp_path, case):
    r, exe = _build(tmp_path, case, ["-O2", "-g"])
    _assert_clean_error(r, exe, case)
    where = f"{case}.c:{_line_of(case)}"
    assert where in r.stderr, f"{case}: expected '{where}' in:\n{r.stderr}"


def test_external_error_says_which_object(tmp_path):
    """The object without bitcode that defines the callee is named, so the user knows what to
    rebuild."""
    r, exe = _build(tmp_path, "external_no_bitcode", ["-O2"])
    _assert_clean_error(r, exe, "external_no_bitcode")
    assert "mystery.o" in r.stderr, r.stderr


def test_without_g_suggests_g(tmp_path):
    r, exe = _build(tmp_path, "external_no_bitcode", ["-O2"])
    _assert_clean_error(r, exe, "external_no_bitcode")
    assert "-g" in r.stderr, r.stderr
