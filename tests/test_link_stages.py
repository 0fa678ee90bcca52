"""How the link step runs its LLVM work on small programs: a small module is optimized and
compiled in the link's own process (lto/in_process.py), with the code opt and llc give, and a
module with static constructors still gets them run; enzyme-cc's runtimes bring only what the
program calls (rules/c_runtime.py link_needed)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent

SMALL = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
double __enzyme_autodiff(void *, ...);
static double scale = 1.0;
#ifdef CONSTRUCTOR
__attribute__((constructor)) static void set_scale(void) {
  const char *s = getenv("SMALL_SCALE");        /* (not folded away by the optimizer) */
  scale = s ? atof(s) : 3.0;
}
#endif
double f(double x) {
  double s = 0;
  for (int i = 1; i <= 4; i++) s += sin(x * i) / i;
  return scale * s * x;
}
int main(void) {
  double x = 0.7, h = 1e-6;
  double d = __enzyme_autodiff((void *)f, x);
  double fd = (f(x + h) - f(x - h)) / (2 * h);
  printf("%.15g %.15g %g\n", d, fd, scale);
  return fabs(d - fd) > 1e-7 * (1 + fabs(fd));
}
"""


def _build(tmp_path, name, env=(), flags=()):
    src = tmp_path / "small.c"
    src.write_text(SMALL)
    exe = tmp_path / name
    e = dict(os.environ, ENZYME_CC_CACHE="0", **dict(env))
    r = subprocess.run([BIN / "enzyme-cc", "-O2", *[f"-D{d}" for d in flags], str(src), "-lm",
                        "-o", str(exe)], capture_output=True, text=True, env=e)
    return r, exe


def _section(exe, name, tmp_path):
    out = tmp_path / f"{exe.name}{name}"
    subprocess.run(["llvm-objcopy-22", "--dump-section", f"{name}={out}", str(exe),
                    str(tmp_path / "scratch")], check=True)
    return out.read_bytes()


def test_small_program_needs_neither_opt_nor_llc(tmp_path):
    """With the tools made to fail, the small program still links (its modules never reach
    them), its gradient matches central differences, and its code is the tools' own byte for
    byte (ENZYME_CC_LLVM_TOOLS=1 sends the same modules to opt and llc)."""
    r, exe = _build(tmp_path, "inproc", {"ENZYME_CC_OPT": "false", "ENZYME_CC_LLC": "false"})
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout
    r2, exe2 = _build(tmp_path, "tools", {"ENZYME_CC_LLVM_TOOLS": "1"})
    assert r2.returncode == 0, r2.stderr
    assert subprocess.run([str(exe2)], capture_output=True, text=True).stdout == out.stdout
    assert _section(exe, ".text", tmp_path) == _section(exe2, ".text", tmp_path)
    r3, _ = _build(tmp_path, "refused", {"ENZYME_CC_LLVM_TOOLS": "1", "ENZYME_CC_OPT": "false"})
    assert r3.returncode != 0 and "the optimization pipeline failed" in r3.stderr, r3.stderr


def test_static_constructor_of_a_small_program_runs(tmp_path):
    """A module with a static constructor goes to llc, which puts it in .init_array (the
    in-process TargetMachine would use .ctors): the constructor runs before main."""
    r, exe = _build(tmp_path, "ctor", flags=("CONSTRUCTOR",))
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.split()[2] == "3", out.stdout


FORTRAN = """
module m
  use iso_c_binding
  implicit none
contains
  function f(x) bind(c, name="f") result(e)
    real(c_double), intent(in) :: x(4)
    real(c_double) :: e
    e = sum(x * x)
  end function
end module

program main
  use m
  implicit none
  interface
    subroutine autodiff(g, x, dx) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_double
      type(c_funptr), value :: g
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
  real(c_double) :: x(4), dx(4)
  integer :: i
  x = [(0.5d0 * i, i = 1, 4)]
  dx = 0
  call autodiff(c_funloc(f), x, dx)
  print *, dx
  if (maxval(abs(dx - 2 * x)) > 1d-12) stop 1
end program
"""


def test_fortran_runtime_brings_only_the_entries_called(tmp_path):
    """An unoptimized SUM calls flang's runtime entry, which enzyme-cc implements in C: the
    gradient is 2x, and the module AD reads holds that entry's implementation and none of the
    runtime's unrelated ones (TRANSPOSE, MATMUL, ALLOCATE, ...), which were carried through
    every stage before."""
    (tmp_path / "p.f90").write_text(FORTRAN)
    dump = tmp_path / "dump"
    e = dict(os.environ, ENZYME_CC_CACHE="0", ENZYME_CC_DUMP_DIR=str(dump))
    subprocess.run([BIN / "enzyme-fc", "-O0", "p.f90", "-o", "p"], cwd=tmp_path, env=e,
                   check=True)
    out = subprocess.run([str(tmp_path / "p")], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout
    text = (dump / "before-ad.ll").read_text()
    defined = set(re.findall(r"^define [^@]*@(__enzyme_cc_fortran_\w+)", text, re.M))
    assert "__enzyme_cc_fortran_SumReal8" in defined, sorted(defined)
    for unrelated in ("Transpose", "MatmulReal8Real8", "AllocatableAllocate", "Cshift",
                      "SumDim", "Destroy"):
        assert not any(d.startswith(f"__enzyme_cc_fortran_{unrelated}") for d in defined), \
            sorted(defined)
