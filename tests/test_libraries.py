"""Real libraries compiled into the differentiated code: each program in tests/libraries/ prints
`CHECK name got want` lines (re-verified here) and exits non-zero if one fails. Built at -O0, -O2
and -O3 with the include flags of its library."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run

HERE = Path(__file__).resolve().parent / "libraries"
BIN = Path(sys.executable).parent
# program -> (include flags, the header that must exist: scripts/setup.sh installs it)
EIGEN = (["-I/usr/include/eigen3"], "/usr/include/eigen3/Eigen/Dense")
LIBRARIES = {"eigen_dense.cpp": EIGEN, "eigen_decompositions.cpp": EIGEN, "eigen_sparse.cpp": EIGEN,
             "eigen_quaternions.cpp": EIGEN}


# -O3 in the slow tier: every AD program runs at -O3 in test_ad_programs, and Eigen's -O2 build
# takes the same pre-AD pipeline but for the unroll budget (15 s a build, warm)
# (and -O0 of the larger programs, 20-27 s a build each: Eigen at -O0 in the default suite is
# test_eigen_vectorized_*'s sample; the sparse and decompositions programs at every level: 25-35 s
# a build)
@pytest.mark.parametrize("prog,level", [
    pytest.param(prog, level, marks=[pytest.mark.slow] if level == "-O3" or level == "-O0" or
                 prog in ("eigen_sparse.cpp", "eigen_decompositions.cpp") else [])
    for prog in sorted(LIBRARIES) for level in ("-O0", "-O2", "-O3")])
def test_library_program(tmp_path, prog, level):
    _build_and_check(tmp_path, prog, [level])


@pytest.mark.parametrize("level", ["-O2", "-O3"])
def test_eigen_element_stiffness(tmp_path, level):
    """A finite element's stiffness product K = B^T D B with fixed-size Eigen matrices (B 3 x 6
    filled from the input by a loop), energy u^T K u: a new user's reduced FEM kernel, kept as
    it was (the IR that showed the bug depends on the file as it is). At -O3 LLVM broadcast an
    entry of each column through `bitcast double to <1 x double>`, which activity took for a
    constant: the middle row's gradient came out halved in both modes, silently. The program
    checks its gradient against the exact one, 2 D B u u^T, and its tangent."""
    assert os.path.exists(EIGEN[1]), f"{EIGEN[1]} is missing: run scripts/setup.sh"
    shutil.copy(HERE / "eigen_element_stiffness.cpp", tmp_path / "k.cpp")
    run([str(BIN / "enzyme-c++"), level, "-w", *EIGEN[0], "k.cpp", "-o", "k"], cwd=tmp_path)
    out = run([str(tmp_path / "k")], cwd=tmp_path).stdout
    assert "max |grad - exact| = 1.1" in out or "max |grad - exact| = 0" in out, out


@pytest.mark.parametrize("options", [["-O2"], ["-O2", "-msse4.1"], ["-O0", "-mavx2", "-mfma"]],
                         ids=" ".join)
def test_eigen_vectorized_exp(tmp_path, options):
    """Eigen's vectorized exp with SSE4.1 / AVX: their rounding and conversion intrinsics were
    refused (a new-user check on an Eigen softmax); with SSE2 alone its rounding barrier was;
    the float exp's truncating conversion too."""
    LIBRARIES["eigen_vectorized_exp.cpp"] = EIGEN
    _build_and_check(tmp_path, "eigen_vectorized_exp.cpp", options)


@pytest.mark.parametrize("options", [["-O2"], ["-O0"], ["-O3", "-mavx2", "-mfma"],
                                     ["-O3", "-mavx512f", "-mavx512dq"]], ids=" ".join)
def test_eigen_vectorized_log(tmp_path, options):
    """Eigen's vectorized log, log1p and expm1 in double and float: the fraction Eigen takes on
    the bits (the exponent field set to a constant) was refused; with AVX2, a pointer SROA kept
    in a float vector's bits; with AVX-512, float abs on <8 x i64> lanes."""
    if "-mavx512f" in options and not _cpu_has("avx512f", "avx512dq"):
        pytest.skip("this CPU has no AVX-512")
    LIBRARIES["eigen_vectorized_log.cpp"] = EIGEN
    _build_and_check(tmp_path, "eigen_vectorized_log.cpp", options)


@pytest.mark.parametrize("options", [["-O2"], ["-O0"], ["-O3", "-mavx2", "-mfma"],
                                     ["-O3", "-mavx512f", "-mavx512dq"]], ids=" ".join)
def test_eigen_vectorized_float_trig(tmp_path, options):
    """Eigen's vectorized float sin and cos: the signs set by xor masks of the quadrant were
    refused; a huge argument, whose reduction on the mantissa bits would lose the derivative,
    stops the derivative with that error at run time."""
    if "-mavx512f" in options and not _cpu_has("avx512f", "avx512dq"):
        pytest.skip("this CPU has no AVX-512")
    LIBRARIES["eigen_vectorized_trig.cpp"] = EIGEN
    _build_and_check(tmp_path, "eigen_vectorized_trig.cpp", options)
    # (under AVX-512 Eigen reduces huge arguments by libm's sinf: a right gradient, checked)
    r = subprocess.run([str(tmp_path / "prog"), "huge"], capture_output=True, text=True)
    assert "converts bits of a float's mantissa to a number" in r.stderr if r.returncode else \
        "CHECK" in r.stdout and "FAILED" not in r.stdout, r.stdout + r.stderr


def _build_and_check(tmp_path, prog, options):
    flags, header = LIBRARIES[prog]
    assert os.path.exists(header), f"{header} is missing: run scripts/setup.sh"
    src = tmp_path / prog
    shutil.copy(HERE / prog, src)
    exe = tmp_path / "prog"
    run([str(BIN / "enzyme-c++"), *options, *flags, str(src), "-o", str(exe)], cwd=tmp_path)
    out = run([str(exe)], cwd=tmp_path).stdout
    checks = [line.split() for line in out.splitlines() if line.startswith("CHECK ")]
    assert checks, out
    for _, name, got, want, *_ in checks:
        assert abs(float(got) - float(want)) <= 1e-5 * (1 + abs(float(want))), f"{name}: {out}"


def _cpu_has(*flags) -> bool:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    have = next((ln.split(":", 1)[1].split() for ln in text.splitlines()
                 if ln.startswith("flags")), [])
    return all(f in have for f in flags)


# Eigen built for AVX2 and FMA (what -march=native gives on most machines): 256-bit packets in
# SROA'd vector slots, FMA and max/min as inline assembly, 32-byte aligned locals and
# hand-aligned blocks; each was refused, crashed or (HouseholderQR with AVX-512) gave a zero
# gradient with no error before. The larger programs in the slow tier (28-38 s a build).
@pytest.mark.skipif(not _cpu_has("avx2", "fma"), reason="the processor lacks AVX2 or FMA")
@pytest.mark.parametrize("prog", ["eigen_dense.cpp",
                                  pytest.param("eigen_decompositions.cpp", marks=pytest.mark.slow),
                                  pytest.param("eigen_sparse.cpp", marks=pytest.mark.slow)])
def test_library_program_avx2(tmp_path, prog):
    _build_and_check(tmp_path, prog, ["-O2", "-mavx2", "-mfma"])


@pytest.mark.parametrize("level", ["-O2", "-O3"])
def test_fortran_runtime_norm2(tmp_path, level):
    """flang keeps NORM2 a runtime call (_FortranANorm2_8) over an array descriptor."""
    for name in ("fortran_norm2.f90", "fortran_norm2_main.c"):
        shutil.copy(HERE / name, tmp_path / name)
    run([str(BIN / "enzyme-fc"), level, "-c", "fortran_norm2.f90", "-o", "f.o"], cwd=tmp_path)
    run([str(BIN / "enzyme-cc"), level, "-c", "fortran_norm2_main.c", "-o", "m.o"], cwd=tmp_path)
    run([str(BIN / "enzyme-fc"), level, "m.o", "f.o", "-lm", "-o", "prog"], cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    checks = [line.split() for line in out.splitlines() if line.startswith("CHECK ")]
    assert len(checks) == 3, out
    for _, name, got, want, *_ in checks:
        assert abs(float(got) - float(want)) <= 1e-5 * (1 + abs(float(want))), f"{name}: {out}"


LINALG = Path(__file__).resolve().parent.parent / "bench" / "src" / "linalg"


# Fortran routine -> (its C driver, CHECK lines): compiled without -O, as CMake's Release build of
# Reference-LAPACK does (its flang flags are empty), and optimized at an -O2 link
UNOPTIMIZED_FORTRAN = {
    # a loop nest LLVM leaves with one latch for both loops: the gradient was wrong (dA off by up
    # to 1.97) with no error, and Reference BLAS's dtrmm crashed the same way (dgels)
    "fortran_loop_nest.f90": ("fortran_loop_nest_main.c", 163),
    # a dot product called with the same array twice (DDOT(N, X, 1, X, 1), as LAPACK's dlauu2
    # and dpotri do): the shadows were noalias like the arguments, 9 of 246 checks wrong
    "fortran_aliased_dot.f90": ("fortran_aliased_dot_main.c", 246),
}


@pytest.mark.parametrize("source", sorted(UNOPTIMIZED_FORTRAN))
def test_fortran_unoptimized_library(tmp_path, source):
    """Routines compiled without optimization and differentiated after the link's -O2."""
    main, count = UNOPTIMIZED_FORTRAN[source]
    for name in (source, main):
        shutil.copy(HERE / name, tmp_path / name)
    run([str(BIN / "enzyme-fc"), "-c", source, "-o", "lib.o"], cwd=tmp_path)
    run([str(BIN / "enzyme-cc"), "-O2", "-c", main, "-o", "main.o"], cwd=tmp_path)
    run([str(BIN / "enzyme-fc"), "-O2", "main.o", "lib.o", "-lm", "-o", "prog"], cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    checks = [line for line in out.splitlines() if line.startswith("CHECK ")]
    assert len(checks) == count and "FAILED" not in out, out


@pytest.mark.parametrize("level", ["-O2", pytest.param("-O0", marks=pytest.mark.slow)])
def test_program_defined_blas3(tmp_path, level):
    """A static library built with enzyme-fc that defines its own dgemm_, dsyrk_, dtrsm_
    (Reference BLAS interface) and a blocked Cholesky and LU over them (bench/src/linalg):
    gradients through each routine for every combination of its flags, reverse against central
    differences and forward against reverse, with the matrices overwritten after the call; and
    through the factorizations (log-determinant, solves). The routines' calls take the BLAS rule
    (rules/blas.py); with ENZYME_CC_DEFINED_BLAS=code they are differentiated as code, and both
    give the same derivatives."""
    for name in ("blas3.f90", "factor.f90"):
        shutil.copy(LINALG / name, tmp_path / name)
    shutil.copy(HERE / "blas3_main.c", tmp_path / "main.c")
    run([str(BIN / "enzyme-fc"), level, "-c", "blas3.f90", "factor.f90"], cwd=tmp_path)
    run(["llvm-ar-22", "rcs", "liblin.a", "blas3.o", "factor.o"], cwd=tmp_path)
    run([str(BIN / "enzyme-cc"), level, "-c", "main.c", "-o", "main.o"], cwd=tmp_path)
    grads = {}
    for how in ("rule", "code"):
        # linked by the Fortran driver: at -O0 the library calls flang's runtime
        run([str(BIN / "enzyme-fc"), level, "main.o", "-L.", "-llin", "-lm", "-o", how],
            cwd=tmp_path, env=dict(os.environ, ENZYME_CC_DEFINED_BLAS=how))
        out = run([str(tmp_path / how)], cwd=tmp_path).stdout
        checks = [line for line in out.splitlines() if line.startswith("CHECK ")]
        assert len(checks) == 51 and "FAILED" not in out, out
        grads[how] = {w[1]: float(w[2]) for w in map(str.split, out.splitlines())
                      if w[0] == "GRAD"}
    assert len(grads["rule"]) == 27 and grads["rule"].keys() == grads["code"].keys()
    for name, g in grads["rule"].items():     # the same derivative both ways
        assert abs(g - grads["code"][name]) <= 1e-9 * (1 + abs(g)), (name, g, grads["code"])


@pytest.mark.parametrize("level", ["-O2", pytest.param("-O0", marks=pytest.mark.slow)])
def test_program_defined_blas3_with_active_scale(tmp_path, level):
    """The program's own dgemm_, dsyrk_, dtrsm_ called with an active alpha or beta: their code
    is differentiated there (refused before: the rule takes them as constants), reverse against
    central differences, forward against reverse."""
    shutil.copy(LINALG / "blas3.f90", tmp_path / "blas3.f90")
    shutil.copy(HERE / "blas3_active_scale.c", tmp_path / "main.c")
    run([str(BIN / "enzyme-fc"), level, "-c", "blas3.f90"], cwd=tmp_path)
    run([str(BIN / "enzyme-cc"), level, "-c", "main.c", "-o", "main.o"], cwd=tmp_path)
    run([str(BIN / "enzyme-fc"), level, "main.o", "blas3.o", "-lm", "-o", "prog"], cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert out.count("CHECK ") == 5 and "FAILED" not in out, out


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_fortran_module_arrays_as_arguments(tmp_path, level):
    """Module state handed to subroutines by reference (call fill(u, x); call accum(tot, w)):
    the module's globals get shadows as if the function wrote them itself."""
    shutil.copy(HERE / "fortran_module_args.f90", tmp_path / "m.f90")
    run([str(BIN / "enzyme-fc"), level, "m.f90", "-o", "prog"], cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    assert out.split()[-2:] == ["bad", "0"], out


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_fortran_runtime_assign_and_reductions(tmp_path, level):
    """flang's runtime entries, differentiated through enzyme-cc's own implementation
    (rules/fortran_*.c): intrinsic assignment to allocatables (_FortranAAssign: allocation on
    assignment, overlapping sections, REAL(4), COMPLEX, INTEGER); at -O0 the array reductions
    (_FortranASumReal8, ..., _FortranAMatmulReal8Real8) and the array-moving intrinsics
    (TRANSPOSE, RESHAPE, CSHIFT, EOSHIFT, SPREAD; PACK and UNPACK at -O2 too); derived types
    with allocatable components (ALLOCATE, DEALLOCATE, default initialization, destruction at
    the end of a scope and on entry to an INTENT(OUT) dummy, intrinsic assignment as a deep
    copy), MOVE_ALLOC, POINTER allocation and ALLOCATE with SOURCE=; reductions with DIM=,
    copy-in/copy-out of a section, RANDOM_NUMBER and the scalar rules (fortran_intrinsics.f90);
    a module's derived type built through the runtime's assignment (fortran_module.f90)."""
    sources = ("fortran_assign.f90", "fortran_reductions.f90", "fortran_derived.f90",
               "fortran_transform.f90", "fortran_intrinsics.f90", "fortran_module.f90")
    for name in (*sources, "fortran_reductions_main.c"):
        shutil.copy(HERE / name, tmp_path / name)
    fc = [str(BIN / "enzyme-fc"), level, "-c"]
    objects = []
    for name in sources:
        objects.append(name.replace(".f90", ".o"))
        run([*fc, name, "-o", objects[-1]], cwd=tmp_path)
    run([str(BIN / "enzyme-cc"), level, "-c", "fortran_reductions_main.c", "-o", "m.o"],
        cwd=tmp_path)
    run([str(BIN / "enzyme-fc"), level, "m.o", *objects, "-lm", "-o", "prog"], cwd=tmp_path)
    out = run([str(tmp_path / "prog")], cwd=tmp_path).stdout
    checks = [line.split() for line in out.splitlines() if line.startswith("CHECK ")]
    assert len(checks) == 49 and "FAILED" not in out, out


CONST_MATMUL = """\
! w differentiated, x passed enzyme_const: at -O0 flang calls its runtime's MATMUL and
! DOT_PRODUCT with both arrays' descriptors
function f(w, x) bind(c, name="f") result(l)
  use iso_c_binding
  real(c_double), intent(in) :: w(2, 3), x(3)
  real(c_double) :: l
  l = sum(matmul(w, x)**2) + dot_product(x(1:2), matmul(w, x))
end function
"""

CONST_MATMUL_MAIN = r"""#include <stdio.h>
#include <math.h>
extern int enzyme_const, enzyme_dup;
double __enzyme_autodiff(void *, ...);
double f(const double *w, const double *x);
int main(void) {
  double w[6] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, dw[6] = {0}, x[3] = {1, 2, 3}, z[2] = {0}, e = 0;
  __enzyme_autodiff((void *)f, enzyme_dup, w, dw, enzyme_const, x);
  for (int j = 0; j < 3; j++) for (int i = 0; i < 2; i++) z[i] += w[i + 2 * j] * x[j];
  for (int j = 0; j < 3; j++) for (int i = 0; i < 2; i++)   /* d/dw(i,j) = (2 z_i + x_i) x_j */
    e += fabs(dw[i + 2 * j] - (2 * z[i] + x[i]) * x[j]);
  printf("%s %g\n", e < 1e-12 ? "ok" : "FAILED", e);
  return e > 1e-12;
}
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_fortran_matmul_with_a_constant_operand(tmp_path, level):
    """MATMUL and DOT_PRODUCT of an active array with one passed enzyme_const: at -O0 (flang's
    runtime entries, behind our wrappers' fallback) the constant array's descriptor counted as
    written by the runtime, and the link refused 'a pointer to double data without a shadow
    (argument 2 of 'f') is stored into memory that has one'."""
    (tmp_path / "f.f90").write_text(CONST_MATMUL)
    (tmp_path / "main.c").write_text(CONST_MATMUL_MAIN)
    run([str(BIN / "enzyme-fc"), level, "-c", "f.f90", "-o", "f.o"], cwd=tmp_path)
    run([str(BIN / "enzyme-cc"), level, "-c", "main.c", "-o", "m.o"], cwd=tmp_path)
    run([str(BIN / "enzyme-fc"), level, "m.o", "f.o", "-lm", "-o", "prog"], cwd=tmp_path)
    assert run([str(tmp_path / "prog")], cwd=tmp_path).stdout.startswith("ok ")


BESSEL_SEQUENCE = """\
subroutine run(n, x, e) bind(c, name="run")
  use iso_c_binding
  integer(c_int), value :: n
  real(c_double), intent(in) :: x(n)
  real(c_double), intent(out) :: e
  real(c_double) :: b(3)
  b = bessel_jn(0, 2, x(1))
  e = sum(b) * x(2)
end subroutine
"""

DRIVER = """\
extern int enzyme_const, enzyme_dup;
void __enzyme_autodiff(void *, ...);
void run(int n, const double *x, double *e);
int main(void) {
  double x[2] = {1, 2}, dx[2] = {0}, e, de = 1;
  __enzyme_autodiff((void *)run, enzyme_const, 2, enzyme_dup, x, dx, enzyme_dup, &e, &de);
  return 0;
}
"""


def test_fortran_runtime_without_derivative_is_named(tmp_path):
    """A flang runtime routine enzyme-cc cannot differentiate (the sequence form of BESSEL_JN)
    is a clear error that names it and says what works."""
    (tmp_path / "k.f90").write_text(BESSEL_SEQUENCE)
    (tmp_path / "m.c").write_text(DRIVER)
    run([str(BIN / "enzyme-fc"), "-O2", "-c", "k.f90", "-o", "k.o"], cwd=tmp_path)
    run([str(BIN / "enzyme-cc"), "-O2", "-c", "m.c", "-o", "m.o"], cwd=tmp_path)
    r = run([str(BIN / "enzyme-fc"), "-O2", "m.o", "k.o", "-o", "prog"], cwd=tmp_path,
            check=False)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "flang's runtime routine '_FortranABesselJn" in r.stderr, r.stderr
    assert "has no derivative in enzyme-cc" in r.stderr, r.stderr
    assert "write this one as a loop over the elements" in r.stderr, r.stderr
    assert "the sequence forms of BESSEL_JN and BESSEL_YN are not differentiated" in r.stderr


def test_every_flang_runtime_entry_is_classified():
    """Each entry point the installed flang runtime exports is inactive, ours (differentiated
    as code), under a rule, or refused with a reason (rules/fortran_catalog.py): a flang with
    new entries fails here until someone decides what they are."""
    import tomli
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from rules import fortran_catalog
    from rules.fortran import SUBSTITUTED
    lib = run(["clang-22", "-print-file-name=libflang_rt.runtime.a"]).stdout.strip()
    syms = run(["llvm-nm-22", "-g", "--defined-only", "--format=just-symbols", lib]).stdout
    entries = sorted({s for s in syms.split() if s.startswith("_FortranA")})
    assert len(entries) > 1000, entries[:10]
    root = Path(__file__).resolve().parents[1] / "stdlib_rules"
    listed = set(tomli.loads((root / "inactive.toml").read_text())["inactive"]["names"])
    rules = set(tomli.loads((root / "fortran.toml").read_text()))
    ours = {"_FortranA" + s for s in SUBSTITUTED}
    unclassified = [e for e in entries if e not in ours and e not in rules and e not in listed
                    and not fortran_catalog.inactive(e)
                    and not fortran_catalog.refusal(e)]
    assert unclassified == []
    # an entry is in one class only (what is ours or has a rule is not also inactive)
    assert not [e for e in ours | rules if e in listed or fortran_catalog.inactive(e)]
