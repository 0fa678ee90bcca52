"""OpenMP programs differentiated in reverse, forward and vector forward mode (enzyme_cc/ad/parallel/openmp.py).

Each program in tests/openmp_programs/ checks its derivatives itself (omp_check.h: central
finite differences of the parallel primal, the serial copy's derivatives, the dot-product test,
20 repeated reverse sweeps) and prints `SUM <grad sum> <Jv . w>`. It is built once per level and
run with OMP_NUM_THREADS=1, 2 and 4 (oversubscribed on small machines, which shakes out races);
the sums must agree across thread counts up to rounding. Constructs outside the supported set
are link-time errors naming the construct and the source line.
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ParallelBuilds, environ, run, sampled, selected
from enzyme_cc.toolchain import tool

HERE = Path(__file__).resolve().parent / "openmp_programs"
PROGRAMS = sorted(p.name for p in HERE.iterdir() if p.suffix in (".c", ".cpp"))
# -ref: no pre-AD optimization (every local in memory); -fastmath: -O3 -ffast-math (reassociated
# reductions, contracted and reciprocal arithmetic in the parallel and the serial copy alike)
LEVELS = ("-O0", "-O2", "-O0-ref", "-O3-fastmath")
# the Ref build for the programs whose unoptimized form differs most (captured scalars reloaded
# from memory, reduction copies, private arrays); all of them pass it, this keeps the file's
# time near three minutes on two cores
REF_PROGRAMS = {"omp_firstprivate.c", "omp_private.c", "omp_reduction.c", "omp_critical_named.c",
                "omp_cxx.cpp"}
THREADS = (1, 2, 4)
RUN_TIMEOUT = 120          # a hang (a deadlocked reverse sweep) fails instead of blocking


def _driver(prog):
    return ["enzyme-c++", "-std=c++17"] if prog.endswith(".cpp") else ["enzyme-cc"]


def _build(prog, level, outdir):
    exe = outdir / f"{Path(prog).stem}{level}"
    env = environ(ENZYME_CC_PREOPT="0") if level.endswith("-ref") else None
    flags = ["-O3", "-ffast-math"] if level == "-O3-fastmath" else [level.removesuffix("-ref")]
    r = run([*_driver(prog), "-fopenmp", *flags, str(HERE / prog), "-lm",
             "-o", str(exe)], cwd=outdir, check=False, env=env)
    return exe, r


@pytest.fixture(scope="module")
def builds(request, tmp_path_factory):
    """The programs at the levels of the tests that run, built in parallel once for the module
    (a build another test asks for later is made then)."""
    b = ParallelBuilds(_build, tmp_path_factory.mktemp("omp"), selected(request, "prog", "level"))
    yield b
    b.pool.shutdown(wait=False, cancel_futures=True)


def _sums(out):
    line = next((ln for ln in out.splitlines() if ln.startswith("SUM ")), None)
    assert line, out
    return [float(v) for v in line.split()[1:]]


def _program_params():
    """-O2 for every program, Ref for REF_PROGRAMS, -O0 and -O3 -ffast-math for a fixed quarter
    each (the others in the slow tier)."""
    for p in PROGRAMS:
        for lv in LEVELS:
            if "ref" in lv and p not in REF_PROGRAMS:
                continue
            slow = lv == "-O3-fastmath" and not sampled(p, 4) or \
                lv == "-O0" and not sampled(p, 4, lv)
            yield pytest.param(p, lv, marks=[pytest.mark.slow] if slow else [], id=f"{p}-{lv}")


@pytest.mark.parametrize("prog,level", list(_program_params()))
def test_openmp_program(builds, prog, level):
    exe, b = builds.result(prog, level)
    assert b.returncode == 0, b.stdout + b.stderr
    sums = {}
    for n in THREADS:
        r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=RUN_TIMEOUT,
                           env=dict(os.environ, OMP_NUM_THREADS=str(n)))
        bad = [ln for ln in r.stdout.splitlines() if "FAILED" in ln]
        assert r.returncode == 0 and not bad, f"OMP_NUM_THREADS={n}:\n" + "\n".join(bad[:20]) + r.stderr
        sums[n] = _sums(r.stdout)
    for n in THREADS[1:]:
        assert sums[n] == pytest.approx(sums[1], rel=1e-11), (n, sums)


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
def test_openmp_valgrind(builds):
    """Per-thread tapes, shadows and deferred frees: no invalid access, nothing definitely lost
    (libomp's own thread pool shows as 'possibly lost', which is allowed). omp_fork_loop.c: the
    per-thread tape set kept across forks, grown for larger teams, freed with the tape."""
    for prog in ("omp_cxx.cpp", "omp_fork_loop.c"):
        exe, b = builds.result(prog, "-O2")
        assert b.returncode == 0, b.stderr
        run(["valgrind", "-q", "--error-exitcode=1", "--leak-check=full",
             "--errors-for-leak-kinds=definite", str(exe)],
            env=dict(os.environ, OMP_NUM_THREADS="2"))


def test_fopenmp_driver(tmp_path):
    """-fopenmp reaches the compile and the link step: the program runs on a team of
    OMP_NUM_THREADS threads, compiled and linked in one step or two."""
    src = tmp_path / "team.c"
    src.write_text('#include <omp.h>\n#include <stdio.h>\nint main(void) {\n'
                   '  int n = 0;\n#pragma omp parallel\n#pragma omp single\n'
                   '  n = omp_get_num_threads();\n  printf("%d\\n", n);\n  return 0;\n}\n')
    run(["enzyme-cc", "-fopenmp", "-O2", str(src), "-o", str(tmp_path / "a")], cwd=tmp_path)
    run(["enzyme-cc", "-fopenmp", "-O2", "-c", str(src), "-o", str(tmp_path / "team.o")], cwd=tmp_path)
    run(["enzyme-cc", "-fopenmp", str(tmp_path / "team.o"), "-o", str(tmp_path / "b")], cwd=tmp_path)
    for exe in ("a", "b"):
        for n in (1, 3):
            r = run([str(tmp_path / exe)], env=dict(os.environ, OMP_NUM_THREADS=str(n)))
            assert r.stdout.strip() == str(n)


VIRTUAL_CONST = r"""
#include <stdio.h>
extern int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
typedef struct Mat Mat;
struct Mat { double (*w)(const Mat *, double); double E; };
static double lin(const Mat *m, double e) { return 0.5 * m->E * e * e; }
static double cub(const Mat *m, double e) { return m->E * e * e * e; }
double energy(Mat *const *mats, const double *eps, int n) {
  double W = 0.0;
#pragma omp parallel for reduction(+:W)
  for (int i = 0; i < n; i++) W += mats[i]->w(mats[i], eps[i]);
  return W;
}
int main(void) {
  Mat m[4] = {{lin, 1}, {cub, 2}, {lin, 3}, {cub, 4}};
  Mat *mats[4] = {&m[0], &m[1], &m[2], &m[3]};
  double eps[4] = {0.1, 0.2, 0.3, 0.4}, deps[4] = {0};
  __enzyme_autodiff((void *)energy, enzyme_const, mats, enzyme_dup, eps, deps, enzyme_const, 4);
  printf("%.12g %.12g %.12g %.12g\n", deps[0], deps[1], deps[2], deps[3]);
  return 0;
}
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_openmp_indirect_calls_on_const_objects(tmp_path, level):
    """Objects read from enzyme_const memory and called through function pointers inside a
    parallel loop (a C++ virtual call's shape): the indirect call was taken to write its
    arguments, the captured slot holding the array looked active, and the derivative read the
    objects through a null shadow (a crash; a new-user check). Now its possible targets'
    summaries decide, as without -fopenmp."""
    (tmp_path / "v.c").write_text(VIRTUAL_CONST)
    run(["enzyme-cc", "-fopenmp", level, "v.c", "-o", "v"], cwd=tmp_path)
    want = [0.5 * 2 * 0.1, 3 * 2 * 0.2 ** 2, 0.5 * 3 * 2 * 0.3, 3 * 4 * 0.4 ** 2]
    for n in (1, 2):
        r = run([str(tmp_path / "v")], env=dict(os.environ, OMP_NUM_THREADS=str(n)))
        assert [float(v) for v in r.stdout.split()] == pytest.approx(want, rel=1e-12), r.stdout


VECTOR_LOADS = r"""
#include <stdio.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
typedef double v2 __attribute__((vector_size(16), aligned(8)));
double g(const double *x, int n) {
  double e = 0;
#pragma omp parallel for reduction(+:e)
  for (int i = 1; i < n - 1; i++) {
    v2 a = *(const v2 *)&x[0], b = *(const v2 *)&x[i - 1];
    v2 p = a * b;
    double d = p[0] + p[1] + x[2] * x[i + 1];
    e += d * d;
  }
  return e;
}
int main(void) {
  double x[6] = {1, 2, 3, 4, 5, 6}, dx[6] = {0};
  __enzyme_autodiff((void *)g, enzyme_dup, x, dx, enzyme_const, 6);
  printf("%g %g %g %g %g %g\n", dx[0], dx[1], dx[2], dx[3], dx[4], dx[5]);
  return 0;
}
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_openmp_vector_loads_of_shared_data(tmp_path, level):
    """Two-lane vector loads of shared data in a parallel loop (Fortran's dot_product of array
    sections vectorized): their adjoints' atomic add was a helper named after the vector type,
    which the IR reader could not read (an internal error; a new-user check). Now lane by
    lane."""
    (tmp_path / "v.c").write_text(VECTOR_LOADS)
    run(["enzyme-cc", "-fopenmp", level, "v.c", "-o", "v"], cwd=tmp_path)
    for n in (1, 2):
        r = run([str(tmp_path / "v")], env=dict(os.environ, OMP_NUM_THREADS=str(n)))
        assert [float(v) for v in r.stdout.split()] == [548, 800, 1104, 288, 284, 192], r.stdout


REFUSED = {
    "teams": ("#pragma omp teams distribute parallel for\n"
              "for (int i = 0; i < n; i++) y[i] = x[i] * x[i];", "OpenMP teams"),
    "copyprivate": ("#pragma omp parallel\n{\n  double c;\n#pragma omp single copyprivate(c)\n"
                    "  c = x[0];\n#pragma omp for\n  for (int i = 0; i < n; i++) y[i] = x[i] * c;\n}",
                    "OpenMP single copyprivate"),
    "task": ("#pragma omp parallel\n#pragma omp single\nfor (int i = 0; i < n; i++) {\n"
             "#pragma omp task\n  y[i] = x[i] * x[i];\n}",
             "OpenMP tasks (#pragma omp task"),
    "ordered": ("#pragma omp parallel for ordered\nfor (int i = 0; i < n; i++) {\n"
                "#pragma omp ordered\n  y[i] = x[i] * x[i];\n}", "OpenMP ordered"),
    # (its outlined function's writes were missed by the loop's snapshots: a wrong gradient)
    "checkpointed_loop": ("#pragma enzyme checkpoint(\"revolve\", 2)\n"
                          "for (int s = 0; s < 3; s++) {\n#pragma omp parallel for\n"
                          "  for (int i = 0; i < n; i++) y[i] = y[i] * x[i];\n}",
                          "a loop marked for checkpointing holds an OpenMP parallel region"),
    "lock": ("omp_lock_t l;\nomp_init_lock(&l);\n#pragma omp parallel for\n"
             "for (int i = 0; i < n; i++) {\n  omp_set_lock(&l);\n  y[0] += x[i];\n"
             "  omp_unset_lock(&l);\n}", "OpenMP locks"),
}


@pytest.mark.parametrize("mode", ["__enzyme_autodiff", "__enzyme_fwddiff"])
@pytest.mark.parametrize("case", sorted(REFUSED))
def test_openmp_refused(tmp_path, case, mode):
    body, msg = REFUSED[case]
    src = tmp_path / "r.c"
    src.write_text("#include <omp.h>\n" +
                   ("#include <enzyme/checkpoint.h>\n" if "checkpoint" in body else "") +
                   "extern int enzyme_dup, enzyme_const;\n"
                   f"void {mode}(void *, ...);\n"
                   "void f(const double *x, double *y, int n) {\n" + body + "\n}\n"
                   "int main(void) {\n  double x[4] = {1, 2, 3, 4}, dx[4], y[4], dy[4] = {1, 1, 1, 1};\n"
                   f"  {mode}((void *)f, enzyme_dup, x, dx, enzyme_dup, y, dy, enzyme_const, 4);\n"
                   "  return 0;\n}\n")
    r = run(["enzyme-cc", "-fopenmp", "-O2", "-g", str(src), "-o", str(tmp_path / "r")],
            cwd=tmp_path, check=False)
    assert r.returncode != 0
    assert "enzyme-cc: error:" in r.stderr and msg in r.stderr, r.stderr
    assert "r.c:" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_openmp_higher_order_refused(tmp_path):
    """A reverse-mode derivative of a region differentiated again: a clear error."""
    src = tmp_path / "ho.c"
    src.write_text(
        "extern int enzyme_dup, enzyme_const;\ndouble __enzyme_autodiff(void *, ...);\n"
        "double __enzyme_fwddiff(void *, ...);\n"
        "double f(const double *x, int n) {\n  double s = 0;\n"
        "#pragma omp parallel for reduction(+ : s)\n"
        "  for (int i = 0; i < n; i++) s += x[i] * x[i] * x[i];\n  return s;\n}\n"
        "void g(const double *x, double *dx, int n) {\n"
        "  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, n);\n}\n"
        "int main(void) {\n  double x[4] = {1, 2, 3, 4}, dx[4] = {0}, v[4] = {1}, h[4] = {0};\n"
        "  __enzyme_fwddiff((void *)g, enzyme_dup, x, v, enzyme_dup, dx, h, enzyme_const, 4);\n"
        "  return 0;\n}\n")
    r = run(["enzyme-cc", "-fopenmp", "-O2", str(src), "-o", str(tmp_path / "ho")], cwd=tmp_path,
            check=False)
    assert r.returncode != 0 and "enzyme-cc: error:" in r.stderr, r.stderr
    assert "parallel region differentiated again (higher order)" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


WIDTH2 = """#include <stdio.h>
int enzyme_width, enzyme_dupv, enzyme_const;
void MODE(void *, ...);
void f(const double *x, double *y, int n) {
#pragma omp parallel for
  for (int i = 0; i < n; i++) y[i] = x[i] * x[i] * x[i];
}
int main(void) {
  double x[4] = {1, 2, 3, 4}, y[4], seed[8] = {1, 0, 0, 0, 0, 0, 1, 0}, out[8] = {0};
  MODE((void *)f, enzyme_width, 2, enzyme_dupv, sizeof(double) * 4, x, XS,
       enzyme_dupv, sizeof(double) * 4, y, YS, enzyme_const, 4);
  printf("%g %g %g %g\\n", out[0], out[6], out[1], out[4]);
  return 0;
}
"""


def test_openmp_vector_mode(tmp_path):
    """enzyme_width 2 over a parallel region: forward mode gives both lanes' tangents; reverse
    mode is refused naming the region (its forward sweep's per-thread tapes are one lane's),
    where the message spoke of a library call."""
    fwd = WIDTH2.replace("MODE", "__enzyme_fwddiff").replace("XS", "seed").replace("YS", "out")
    (tmp_path / "fwd.c").write_text(fwd)
    run(["enzyme-cc", "-fopenmp", "-O2", "fwd.c", "-o", "fwd"], cwd=tmp_path)
    for n in (1, 2):
        r = run([str(tmp_path / "fwd")], env=dict(os.environ, OMP_NUM_THREADS=str(n)))
        # x's tangents e_0 and e_2 give y's, 3 x^2 in lane 0's y[0] and lane 1's y[2]
        assert [float(v) for v in r.stdout.split()] == [3, 27, 0, 0], r.stdout
    rev = WIDTH2.replace("MODE", "__enzyme_autodiff").replace("XS", "out").replace("YS", "seed")
    (tmp_path / "rev.c").write_text(rev)
    r = run(["enzyme-cc", "-fopenmp", "-O2", "-g", "rev.c", "-o", "rev"], cwd=tmp_path,
            check=False)
    assert r.returncode != 0 and "enzyme-cc: error: rev.c:10:" in r.stderr, r.stderr
    assert "an OpenMP parallel region" in r.stderr and "__enzyme_fwddiff with enzyme_width" \
        in r.stderr and "Traceback" not in r.stderr, r.stderr


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not installed")
def test_openmp_cmake_find_package(tmp_path):
    """CMake's find_package(OpenMP) with enzyme-cc's toolchain file (-fopenmp=libomp in both
    steps), building a program whose gradient runs in a parallel region."""
    toolchain = run(["enzyme-cc", "--print-toolchain-file"]).stdout.strip()
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(t C)\nfind_package(OpenMP REQUIRED)\n"
        "add_executable(grad grad.c)\ntarget_link_libraries(grad OpenMP::OpenMP_C m)\n")
    (tmp_path / "grad.c").write_text(
        "#include <stdio.h>\nextern int enzyme_dup, enzyme_const;\n"
        "void __enzyme_autodiff(void *, ...);\n"
        "void f(const double *x, double *y, int n) {\n#pragma omp parallel for\n"
        "  for (int i = 0; i < n; i++) y[i] = x[i] * x[(i + 1) % n];\n}\n"
        "int main(void) {\n  double x[8], dx[8] = {0}, y[8], dy[8];\n"
        "  for (int i = 0; i < 8; i++) { x[i] = i + 1; dy[i] = 1; }\n"
        "  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_dup, y, dy, enzyme_const, 8);\n"
        "  for (int i = 0; i < 8; i++) printf(\"%g \", dx[i]);\n  return 0;\n}\n")
    run(["cmake", "-S", str(tmp_path), "-B", "build", f"-DCMAKE_TOOLCHAIN_FILE={toolchain}"],
        cwd=tmp_path)
    run(["cmake", "--build", "build"], cwd=tmp_path)
    want = [(i + 2) + i for i in range(8)]      # d/dx_i: x[i+1] + x[i-1] (cyclic)
    want[0], want[7] = 2 + 8, 1 + 7
    for n in (1, 3):
        r = run([str(tmp_path / "build" / "grad")], env=dict(os.environ, OMP_NUM_THREADS=str(n)))
        assert [float(v) for v in r.stdout.split()] == want, r.stdout


@pytest.mark.skipif(not (shutil.which("flang") or shutil.which("flang-22")), reason="no flang")
def test_openmp_fortran(tmp_path):
    """flang's OpenMP lowering (the same __kmpc_* calls) through enzyme-fc -fopenmp."""
    exe = tmp_path / "fomp"
    run(["enzyme-fc", "-fopenmp", "-O2", str(HERE / "fortran" / "omp_reduction.f90"), "-o",
         str(exe)], cwd=tmp_path)
    for n in (1, 3):
        r = run([str(exe)], cwd=tmp_path, env=dict(os.environ, OMP_NUM_THREADS=str(n)))
        got, want = (float(v) for v in r.stdout.split())
        assert got == pytest.approx(want, rel=1e-12), r.stdout


@pytest.mark.skipif(not (shutil.which("flang") or shutil.which("flang-22")), reason="no flang")
def test_openmp_fortran_gathers_tracked_by_index(tmp_path):
    """A Fortran element loop gathering through a 1-based connectivity array (flang's index is
    the loaded value less one): tracked by its index, with each load's address checked against
    its base and index (ENZYME_CC_OMP_RANGE_CHECK=1); the gradient agrees with central
    differences and is the same at 1, 2 and 4 threads."""
    dump = tmp_path / "dump"
    env = dict(os.environ, ENZYME_CC_OMP_RANGE_CHECK="1", ENZYME_CC_DUMP_DIR=str(dump))
    run(["enzyme-fc", "-fopenmp", "-O2", str(HERE / "fortran" / "omp_index_gather.f90"), "-o",
         "prog"], cwd=tmp_path, env=env)
    assert (dump / "after-ad.ll").read_text().count("call void @__enzyme_cc_omp_track_index(") >= 2
    sums = []
    for n in (1, 2, 4):
        r = run(["./prog"], cwd=tmp_path, env=dict(os.environ, OMP_NUM_THREADS=str(n)))
        worst, total = (float(ln.split()[1]) for ln in r.stdout.splitlines()[:2])
        assert worst < 1e-6, r.stdout
        sums.append(total)
    assert sums == pytest.approx([sums[0]] * 3, rel=1e-12), sums


@pytest.mark.skipif(not (shutil.which("flang") or shutil.which("flang-22")), reason="no flang")
@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_openmp_fortran_external_queries(tmp_path, level):
    """OpenMP queries declared as externals in Fortran (`!$ INTEGER :: OMP_GET_THREAD_NUM`,
    CloverLeaf's timestep) call libomp's Fortran entries, which were refused in differentiated
    code: the analytic gradient at 1 and 3 threads."""
    exe = tmp_path / "fq"
    run(["enzyme-fc", "-fopenmp", level, str(HERE / "fortran" / "omp_external_queries.f90"),
         "-o", str(exe)], cwd=tmp_path)
    for n in (1, 3):
        r = run([str(exe)], cwd=tmp_path, env=dict(os.environ, OMP_NUM_THREADS=str(n)))
        rows = [[float(v) for v in line.split()] for line in r.stdout.splitlines()]
        assert len(rows) == 8 and all(g == pytest.approx(w, rel=1e-12) for g, w in rows), \
            r.stdout


@pytest.mark.skipif(not (shutil.which("flang") or shutil.which("flang-22")), reason="no flang")
def test_openmp_fortran_threadprivate_without_derivatives(tmp_path):
    """Threadprivate module variables holding timers and a counter in the differentiated code
    (NPB's timers) were refused; an active value stored into one is still refused, by name."""
    exe = tmp_path / "ftp"
    run(["enzyme-fc", "-fopenmp", "-O2", str(HERE / "fortran" / "omp_threadprivate_timer.f90"),
         "-o", str(exe)], cwd=tmp_path)
    for n in (1, 3):
        r = run([str(exe)], cwd=tmp_path, env=dict(os.environ, OMP_NUM_THREADS=str(n)))
        rows = [[float(v) for v in line.split()] for line in r.stdout.splitlines()]
        assert len(rows) == 6 and all(g == pytest.approx(w, rel=1e-12) for g, w in rows), \
            r.stdout
    src = (HERE / "fortran" / "omp_threadprivate_timer.f90").read_text().replace(
        "s = s + x(i) ** 3", "start(2) = x(i) ** 3\n      s = s + start(2)")
    (tmp_path / "active.f90").write_text(src)
    r = subprocess.run(["enzyme-fc", "-fopenmp", "-O2", "-g", "active.f90", "-o", "active"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "active.f90:39:" in r.stderr and "stored to a thread-local variable" in r.stderr, \
        r.stderr


@pytest.mark.skipif(not (shutil.which("flang") or shutil.which("flang-22")), reason="no flang")
@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_openmp_nested_team_of_one_adds_atomically(tmp_path, level):
    """An inner parallel region run as a team of one inside an active team (nesting off:
    TeaLeaf's tea_leaf_cg_calc_p) added into a shared scalar's adjoint without atomics: a race
    that made 35-50 % of the gradients wrong at 2 threads (-O0). 200 exact gradients."""
    exe = tmp_path / "nest"
    run(["enzyme-fc", "-fopenmp", level, str(HERE / "fortran" / "omp_nested_team_of_one.f90"),
         "-o", str(exe)], cwd=tmp_path)
    for n in (1, 2):
        r = run([str(exe)], cwd=tmp_path, env=dict(os.environ, OMP_NUM_THREADS=str(n)))
        assert r.stdout.split() == ["wrong", "0"], (n, r.stdout)


LOCKED_SUM = r"""
#include <stdio.h>
#include <omp.h>
int enzyme_dup, enzyme_const;
double __enzyme_autodiff(void *, ...);
#ifdef MARKED
void *__enzyme_inactivefn[] = {(void *)omp_set_lock, (void *)omp_unset_lock};
#endif
static omp_lock_t locks[4];
double f(const double *x, double *tally, int n) {
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++) {
    double t = x[i] * x[i] * (1 + i % 3);
    omp_set_lock(&locks[i % 4]);
    tally[i % 4] += t;
    omp_unset_lock(&locks[i % 4]);
  }
  return tally[0] + 2 * tally[1] + 3 * tally[2] + 4 * tally[3];
}
int main(void) {
  double x[16], dx[16] = {0}, tally[4] = {0}, dtally[4] = {0}, err = 0;
  for (int i = 0; i < 4; i++) omp_init_lock(&locks[i]);
  for (int i = 0; i < 16; i++) x[i] = 0.1 * i + 0.3;
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_dup, tally, dtally, enzyme_const, 16);
  for (int i = 0; i < 16; i++) {
    double want = 2 * x[i] * (1 + i % 3) * (1 + i % 4);
    err += dx[i] > want ? dx[i] - want : want - dx[i];
  }
  printf("error %g\n", err);
  return err > 1e-12;
}
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_openmp_lock_marked_inactive(tmp_path, level):
    """An OpenMP lock around a sum into shared memory (SimpleMOC's FSR tallies): refused, with a
    hint to list the lock functions in __enzyme_inactivefn; listed, the derivative is exact at 1
    and 3 threads (it was refused either way)."""
    (tmp_path / "l.c").write_text(LOCKED_SUM)
    r = subprocess.run(["enzyme-cc", "-fopenmp", level, "l.c", "-o", "l"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode != 0 and "OpenMP locks in differentiated code" in r.stderr
    assert "list omp_set_lock and omp_unset_lock in __enzyme_inactivefn" in r.stderr
    run(["enzyme-cc", "-fopenmp", level, "-DMARKED", "l.c", "-o", "l"], cwd=tmp_path)
    for n in (1, 3):
        out = run([str(tmp_path / "l")], cwd=tmp_path, env=dict(os.environ, OMP_NUM_THREADS=str(n)))
        assert out.stdout.split() == ["error", "0"], out.stdout


def test_fortran_include_omp_lib_h(tmp_path):
    """`include 'omp_lib.h'` with -fopenmp (gfortran finds it; flang only its module): enzyme-fc
    puts flang's directory last on the include path. Without -fopenmp it is flang's error."""
    (tmp_path / "o.f90").write_text("subroutine nthreads(n)\n  implicit none\n"
                                    "  include 'omp_lib.h'\n  integer :: n\n"
                                    "  n = omp_get_max_threads()\nend subroutine\n"
                                    "program p\n  integer :: n\n  call nthreads(n)\n"
                                    "  print '(i0)', n\nend program\n")
    run(["enzyme-fc", "-fopenmp", "-O2", "o.f90", "-o", "o"], cwd=tmp_path)
    out = run([str(tmp_path / "o")], cwd=tmp_path, env=dict(os.environ, OMP_NUM_THREADS="3"))
    assert out.stdout.split() == ["3"]
    r = subprocess.run(["enzyme-fc", "-O2", "-c", "o.f90"], cwd=tmp_path, capture_output=True,
                       text=True)
    assert r.returncode != 0 and "omp_lib.h" in r.stderr


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_openmp_fortran_parallel_if(tmp_path, level):
    """flang's `!$omp parallel if(cond)` (__kmpc_fork_call_if, refused before; SNAP): the team
    size the condition and num_threads give, and the exact gradient, at 1 and 3 threads."""
    exe = tmp_path / "pif"
    run(["enzyme-fc", "-fopenmp", level, str(HERE / "fortran" / "omp_parallel_if.f90"), "-o",
         str(exe)], cwd=tmp_path)
    for n in (1, 3):
        out = run([str(exe)], cwd=tmp_path, env=dict(os.environ, OMP_NUM_THREADS=str(n))).stdout
        rows = [line.split() for line in out.splitlines()]
        assert [r[:3] for r in rows] == [["clause", "1", "1"], ["plain", "0", "1"],
                                         ["clause", "2", "2"], ["plain", "1", str(n)]], out
        assert all(float(r[3]) < 1e-14 for r in rows), out


@pytest.mark.skipif(not (shutil.which("flang") or shutil.which("flang-22")), reason="no flang")
def test_openmp_fortran_module_state(tmp_path):
    """Module arrays and scalars written in one parallel region and read in another (the way
    Fortran codes keep their state), against central differences at 1 and 3 threads."""
    exe = tmp_path / "fmod"
    run(["enzyme-fc", "-fopenmp", "-O2", str(HERE / "fortran" / "omp_module_state.f90"), "-o",
         str(exe)], cwd=tmp_path)
    for n in (1, 3):
        r = run([str(exe)], cwd=tmp_path, env=dict(os.environ, OMP_NUM_THREADS=str(n)))
        assert r.stdout.split()[-2:] == ["bad", "0"], r.stdout


@pytest.mark.parametrize("level", ["-O0", "-O2"])
@pytest.mark.parametrize("prog", ["omp_affine_ranges.c", "omp_disjoint.c", "omp_versioned_rows.c"])
def test_openmp_hoisted_ranges_cover_loads(tmp_path, prog, level):
    """Loads in counted loops are range-tracked once, in the loop's preheader, from their
    addresses at the first and the last iteration (ad/parallel/openmp_affine.py). Built with
    ENZYME_CC_OMP_RANGE_CHECK=1, every such load checks on every iteration that its address
    lies in the tracked range (an address outside aborts): a range that missed an address could
    let another thread's add be plain, a lost update that a test run rarely shows. The same build
    checks the reverse loops' plain copies (ad/synthesis/openmp_version.py): each of their adds must lie
    in the thread's exclusive range, else the program aborts."""
    dump = tmp_path / "dump"
    env = dict(os.environ, ENZYME_CC_OMP_RANGE_CHECK="1", ENZYME_CC_DUMP_DIR=str(dump))
    run(["enzyme-cc", "-fopenmp", level, str(HERE / prog), "-lm", "-o", "prog"], cwd=tmp_path,
        env=env)
    ir = (dump / "after-ad.ll").read_text()
    assert ir.count("call void @__enzyme_cc_omp_range_assert(") >= 4, "too few loads hoisted"
    assert ir.count("call void @__enzyme_cc_omp_padd.") >= 4, "reverse loops not versioned"
    _run_clean(tmp_path, (2, 4))


def _add_classes(ir):
    """{derivative function: set of the address classes its adjoint adds test}: each add names
    the exclusive ranges (`%ad.xl.<range>.<bytes>`) of every class it tests, two per class (the
    second of class k is range k + K)."""
    from enzyme_cc.ad.parallel.openmp_classes import K
    out = {}
    for fn in re.split(r"\n(?=define )", ir):
        m = re.match(r"define [^@]*@([\w.]+)", fn)
        if m:
            calls = re.findall(r"@__enzyme_cc_omp_add\.double\.a\d+(?:\.m)?\(([^)]*)\)", fn)
            out[m.group(1)] = {tuple(dict.fromkeys(int(k) % K for k in
                                                   re.findall(r"%ad\.xl\.(\d+)\.", c)))
                               for c in calls}
    return out


def test_openmp_range_classes(tmp_path):
    """How a region's loads are grouped for range tracking (openmp_classes.load_class): a called
    function's classes are apart from the region's own (its pointers may point at the thread's
    local arrays: one range spanning those and a shared node array left the node array no
    exclusive part, every add atomic: 2-thread gradients slower than 1-thread ones), and a
    function given only the thread's local arrays tests no add at all (openmp.private_args);
    the x and y components of the node array kept in one block are two classes; a loop over the
    three components with a run-time stride tracks one class per iteration, and its adds test
    all three. The derivatives themselves are checked by test_openmp_program."""
    from enzyme_cc.ad.parallel.openmp_classes import ROOT, K
    dump = tmp_path / "dump"
    run(["enzyme-cc", "-fopenmp", "-O2", str(HERE / "omp_gather_callee.c"), "-lm", "-o", "prog"],
        cwd=tmp_path, env=dict(os.environ, ENZYME_CC_DUMP_DIR=str(dump)))
    adds = _add_classes((dump / "after-ad.ll").read_text())
    region = set().union(*(ks for f, ks in adds.items() if f.startswith("rev.fpar.omp_outlined")))
    callee = set().union(*(ks for f, ks in adds.items() if f.startswith("rev.pick")))
    assert callee and all(ROOT <= k < K for ks in callee for k in ks), adds
    assert not any(ks for f, ks in adds.items() if f.startswith("rev.edges")), adds
    assert all(k < ROOT for ks in region for k in ks), adds
    assert len({ks for ks in region if len(ks) == 1}) >= 2, adds     # x and y apart
    assert any(len(set(ks)) == 3 for ks in region), adds               # d = 0, 1, 2


def test_openmp_per_iteration_ranges_cover_loads(tmp_path):
    """The loads tracked one class per iteration (omp_gather_callee.c's loop over three
    components) are range-checked as test_openmp_hoisted_ranges_cover_loads does for the
    others: built with ENZYME_CC_OMP_RANGE_CHECK=1, each of them checks on every iteration that
    its address lies in the range of one of its classes (an address outside aborts)."""
    dump = tmp_path / "dump"
    env = dict(os.environ, ENZYME_CC_OMP_RANGE_CHECK="1", ENZYME_CC_DUMP_DIR=str(dump))
    run(["enzyme-cc", "-fopenmp", "-O2", str(HERE / "omp_gather_callee.c"), "-lm", "-o", "prog"],
        cwd=tmp_path, env=env)
    assert (dump / "after-ad.ll").read_text().count("call void @__enzyme_cc_omp_range_assert(") >= 3
    _run_clean(tmp_path, (2, 4))


def _run_clean(tmp_path, threads):
    """./prog run with each number of threads: it exits 0 and no check fails."""
    for n in threads:
        r = subprocess.run(["./prog"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=RUN_TIMEOUT, env=dict(os.environ, OMP_NUM_THREADS=str(n)))
        assert r.returncode == 0 and "FAILED" not in r.stdout, r.stdout[-2000:] + r.stderr


def _count_adds(ir: str) -> str:
    """The derivative module with every shared adjoint add counting whether it took the plain
    or the atomic branch, printed at exit as `plain N atomic M`."""
    for branch, counter in (("atomic", "@cnt.atomic"), ("plain", "@cnt.plain")):
        ir = re.sub(r"(define internal void @__enzyme_cc_omp_add\.[^(]*\([^)]*\)[^{]*\{\n"
                    rf"(?:.*\n)*?){branch}:\n",
                    lambda m: f"{m.group(1)}{branch}:\n  %cnt.{branch} = atomicrmw add ptr {counter}, i64 1 "
                              "monotonic\n", ir)
    return ir + """
@cnt.atomic = internal global i64 0
@cnt.plain = internal global i64 0
@cnt.fmt = private constant [22 x i8] c"plain %ld atomic %ld\\0A\\00"
declare i32 @dprintf(i32, ptr, ...)
define internal void @cnt.report() {
  %a = load i64, ptr @cnt.atomic
  %p = load i64, ptr @cnt.plain
  %r = call i32 (i32, ptr, ...) @dprintf(i32 2, ptr @cnt.fmt, i64 %p, i64 %a)
  ret void
}
@llvm.global_dtors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 65535, ptr @cnt.report, ptr null }]
"""


def test_openmp_periodic_ranges_leave_most_adds_plain(tmp_path):
    """A pair loop over a periodic neighbour list and a loop reading halo copies at the array's
    end (omp_periodic_pairs.c): every thread's loads span the whole array, so with one tracked
    range per array no add was the thread's own (all atomic: 2-thread gradients no faster than
    one). With two ranges per class most adds are plain; the derivative module is run with
    each add counted (the derivatives themselves are checked by test_openmp_program)."""
    dump = tmp_path / "dump"
    run(["enzyme-cc", "-fopenmp", "-O2", str(HERE / "omp_periodic_pairs.c"), "-lm", "-o", "prog"],
        cwd=tmp_path, env=dict(os.environ, ENZYME_CC_DUMP_DIR=str(dump)))
    ir = (dump / "after-ad.ll").read_text()
    for n, (plain, atomic) in _counted_adds(tmp_path, ir, (2, 4)):
        assert plain > 5 * atomic, (n, plain, atomic)


def _counted_adds(tmp_path, ir, threads):
    """[(threads, (plain, atomic))]: the derivative module ir, its adds counted (_count_adds),
    compiled and run with each number of threads (no check may fail)."""
    (tmp_path / "counted.ll").write_text(_count_adds(ir))
    run(["clang-22", "-O1", "-fopenmp", "-Wno-override-module", "counted.ll", "-lm", "-o",
         "counted"], cwd=tmp_path)
    out = []
    for n in threads:
        r = subprocess.run(["./counted"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=RUN_TIMEOUT, env=dict(os.environ, OMP_NUM_THREADS=str(n)))
        assert r.returncode == 0 and "FAILED" not in r.stdout, r.stdout[-2000:] + r.stderr
        counts = re.search(r"plain (\d+) atomic (\d+)", r.stderr).groups()
        out.append((n, tuple(map(int, counts))))
    return out


def test_openmp_gathers_tracked_by_index(tmp_path):
    """omp_index_gather.c's element loops gather node values through a connectivity array:
    the team's forward sweep records each gathered index once for the arrays it serves
    (openmp_index.py), with bases fixed in the loop, chosen per pass of an outer loop and
    changing from one element to the next. Built with ENZYME_CC_OMP_RANGE_CHECK=1, each such
    load checks that it lies at its base's shadow plus its index's offset (an address
    elsewhere aborts); the adds are counted: element rows split between two threads share one
    node row, so most adds stay plain. The derivatives themselves are checked by
    test_openmp_program."""
    dump = tmp_path / "dump"
    env = dict(os.environ, ENZYME_CC_OMP_RANGE_CHECK="1", ENZYME_CC_DUMP_DIR=str(dump))
    run(["enzyme-cc", "-fopenmp", "-O2", str(HERE / "omp_index_gather.c"), "-lm", "-o", "prog"],
        cwd=tmp_path, env=env)
    ir = (dump / "after-ad.ll").read_text()
    assert ir.count("call void @__enzyme_cc_omp_track_index(") >= 6, "too few gathers by index"
    assert ir.count("call void @__enzyme_cc_omp_index_base(") >= 1, "no base kept in a slot"
    assert ir.count("call void @__enzyme_cc_omp_index_assert(") >= 6
    for n, (plain, atomic) in _counted_adds(tmp_path, ir, (2, 4)):
        assert plain > (5 if n == 2 else 2) * atomic, (n, plain, atomic)


def test_openmp_exit_spans_merge_out_of_line(tmp_path):
    """Where a loop ends or a team's augmented function returns, its classes' ranges are merged
    (index spans, track_merge): the whole merge decision was inlined at every site, about 50
    instructions each, and so were a return's merges of every class, most of LULESH's team
    forward functions after -O2 (its post-AD stage grew with them). Such a merge is now one
    call of a function that preserves every register, a return calls one function per class
    that holds something, and loops keep the whole decision inline. omp_index_gather.c's
    derivative module after `opt -O2`: 311 unsigned minimums with everything inline, 179 with
    the common cases inline at those sites, 137 so. Range-checked at 2 and 3 threads, and the
    adds are counted as by test_openmp_gathers_tracked_by_index (the same plain/atomic split)."""
    dump = tmp_path / "dump"
    env = dict(os.environ, ENZYME_CC_OMP_RANGE_CHECK="1", ENZYME_CC_DUMP_DIR=str(dump),
               ENZYME_CC_CACHE="0")
    run(["enzyme-cc", "-fopenmp", "-O2", str(HERE / "omp_index_gather.c"), "-lm", "-o", "prog"],
        cwd=tmp_path, env=env)
    _run_clean(tmp_path, (2, 3))
    run([tool("opt"), "-O2", str(dump / "after-ad.ll"), "-S", "-o", "opt.ll"],
        cwd=tmp_path)
    opt = (tmp_path / "opt.ll").read_text()
    assert re.search(r"^define internal preserve_allcc void @__enzyme_cc_omp_track_far\(", opt,
                     re.M), "no out-of-line merge"
    assert opt.count("call preserve_allcc void @__enzyme_cc_omp_track_far(") >= 4
    assert re.search(r"^define internal (?:fastcc )?void @__enzyme_cc_omp_merge_out\(", opt, re.M)
    assert opt.count("@llvm.umin.i64(") <= 160, opt.count("@llvm.umin.i64(")
    ir = (dump / "after-ad.ll").read_text()
    for n, (plain, atomic) in _counted_adds(tmp_path, ir, (2,)):
        assert plain > 5 * atomic, (n, plain, atomic)


def test_openmp_component_gathers_track_one_index(tmp_path):
    """omp_index_components.c gathers a corner's x, y and z through one connectivity entry c,
    as `x[c]`, `x[h + c]` and `x[2h + c]`: the first GEP indexes with c's extension, the others
    with the extension of a sum. The forward sweep records c once per corner (4 per element),
    not once for the first form and once for the others (8 before); the range check passes.
    The derivatives are checked by test_openmp_program."""
    dump = tmp_path / "dump"
    env = dict(os.environ, ENZYME_CC_OMP_RANGE_CHECK="1", ENZYME_CC_DUMP_DIR=str(dump))
    run(["enzyme-cc", "-fopenmp", "-O2", str(HERE / "omp_index_components.c"), "-lm", "-o",
         "prog"], cwd=tmp_path, env=env)
    ir = (dump / "after-ad.ll").read_text()
    assert ir.count("call void @__enzyme_cc_omp_track_index(") == 4, "one track per corner"
    assert ir.count("call void @__enzyme_cc_omp_index_assert(") == 12
    _run_clean(tmp_path, (1, 2))


def test_openmp_component_rows_tracked_by_index(tmp_path):
    """omp_index_rows.c reads its corners' velocities x[d * h + c] in a loop over the three
    components that the optimizer keeps, from rows x + c read once per corner: those loads were
    tracked one class per component (24 two-range tracks per element). The team's forward sweep
    now tracks no load of them: the corners' indices, recorded for the coordinates already, give
    each component's addresses at the element loop's exits (openmp_index._rows). Range-checked
    (each such load checks its address against its row's index); the adds are counted: as many
    plain as with the 24 tracks (44,800 and 6,400 atomic at 2 threads, 32,000 and 19,200 at 4).
    The derivatives are checked by test_openmp_program."""
    dump = tmp_path / "dump"
    env = dict(os.environ, ENZYME_CC_OMP_RANGE_CHECK="1", ENZYME_CC_DUMP_DIR=str(dump))
    run(["enzyme-cc", "-fopenmp", "-O2", str(HERE / "omp_index_rows.c"), "-lm", "-o", "prog"],
        cwd=tmp_path, env=env)
    assert "%invariant.gep" in (dump / "before-ad.ll").read_text(), "rows not formed"
    aug = re.search(r"define [^\n]*@aug\.fpar\.omp_outlined[^\n]*\{\n(?:.*\n)*?\}",
                    (dump / "after-ad.ll").read_text()).group(0)
    assert "call void @__enzyme_cc_omp_track(" not in aug, "a load tracked by itself"
    assert aug.count("call void @__enzyme_cc_omp_track_index(") == 4, "one track per corner"
    assert aug.count("call void @__enzyme_cc_omp_index_assert(") == 16
    _run_clean(tmp_path, (1, 3))
    run(["enzyme-cc", "-fopenmp", "-O2", str(HERE / "omp_index_rows.c"), "-lm", "-o", "prog"],
        cwd=tmp_path, env=dict(os.environ, ENZYME_CC_DUMP_DIR=str(dump), ENZYME_CC_CACHE="0"))
    for n, (plain, atomic) in _counted_adds(tmp_path, (dump / "after-ad.ll").read_text(),
                                            (2, 4)):    # (4 threads: 2 rows of 8 each)
        assert plain > (5 if n == 2 else 1) * atomic, (n, plain, atomic)


def _count_spans(ir: str) -> str:
    """The derivative module with every span the forward sweeps track counted, printed at exit
    as `spans N`."""
    ir = re.sub(r"(define internal void @__enzyme_cc_omp_track_span(?:_x)?\([^)]*\)[^{]*\{\n"
                r"entry:\n)",
                lambda m: m.group(1) + "  %cnt.s = atomicrmw add ptr @cnt.spans, i64 1 monotonic\n",
                ir)
    return ir + """
@cnt.spans = internal global i64 0
@cnt.sfmt = private constant [11 x i8] c"spans %ld\\0A\\00"
declare i32 @dprintf(i32, ptr, ...)
define internal void @cnt.sreport() {
  %n = load i64, ptr @cnt.spans
  %r = call i32 (i32, ptr, ...) @dprintf(i32 2, ptr @cnt.sfmt, i64 %n)
  ret void
}
@llvm.global_dtors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 65535, ptr @cnt.sreport, ptr null }]
"""


def test_openmp_element_blocks_tracked_per_chunk(tmp_path):
    """omp_element_blocks.c reads each element's own block of a shared array in a loop over the
    three components: its span was tracked where that loop starts, once per element (the
    element loop's exit test, on its int index widened and truncated, had no exit count, so
    the span could not move out of it). Now the element loop's exit count is computed modulo
    2^32 and the span of the whole nest is tracked once per thread's chunk (openmp_affine._lift):
    the spans the program's forward sweeps track, counted at 2 threads, fall from 3,080 (one
    per element and call) to 240 (6 per thread and call); the adds stay plain (9,000, none
    atomic, before and after). Range-checked too. The derivatives are checked by
    test_openmp_program."""
    dump = tmp_path / "dump"
    env = dict(os.environ, ENZYME_CC_OMP_RANGE_CHECK="1", ENZYME_CC_DUMP_DIR=str(dump))
    run(["enzyme-cc", "-fopenmp", "-O2", str(HERE / "omp_element_blocks.c"), "-lm", "-o",
         "prog"], cwd=tmp_path, env=env)
    _run_clean(tmp_path, (2, 3))
    run(["enzyme-cc", "-fopenmp", "-O2", str(HERE / "omp_element_blocks.c"), "-lm", "-o", "prog"],
        cwd=tmp_path, env=dict(os.environ, ENZYME_CC_DUMP_DIR=str(dump), ENZYME_CC_CACHE="0"))
    ir = (dump / "after-ad.ll").read_text()
    (tmp_path / "spans.ll").write_text(_count_spans(ir))
    run(["clang-22", "-O1", "-fopenmp", "-Wno-override-module", "spans.ll", "-lm", "-o",
         "spans"], cwd=tmp_path)
    r = subprocess.run(["./spans"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=RUN_TIMEOUT, env=dict(os.environ, OMP_NUM_THREADS="2"))
    assert r.returncode == 0 and "FAILED" not in r.stdout, r.stdout[-2000:] + r.stderr
    spans = int(re.search(r"spans (\d+)", r.stderr).group(1))
    assert spans <= 8 * 2 * 20, spans      # (2 threads, omp_check.h's 20 team gradients)
    for n, (plain, atomic) in _counted_adds(tmp_path, ir, (2,)):
        assert plain > 5 * atomic, (n, plain, atomic)


def test_openmp_memset_and_error_reports_keep_ranges(tmp_path):
    """omp_memset_error_path.c: a region that zeroes its part of a shared array (a memset) and
    reports bad input before exit() adds into shared memory only as its loads' adjoints, so
    its ranges are tracked and most adds are plain (before: all 20,440 atomic at 2 threads)."""
    dump = tmp_path / "dump"
    run(["enzyme-cc", "-fopenmp", "-O2", str(HERE / "omp_memset_error_path.c"), "-lm", "-o",
         "prog"], cwd=tmp_path, env=dict(os.environ, ENZYME_CC_DUMP_DIR=str(dump)))
    assert "@llvm.memset" in (dump / "before-ad.ll").read_text()
    ir = (dump / "after-ad.ll").read_text()
    for n, (plain, atomic) in _counted_adds(tmp_path, ir, (2, 4)):
        assert plain > 5 * atomic, (n, plain, atomic)


def test_openmp_fortran_atomic_hint(tmp_path):
    """`!$omp atomic` on a REAL in differentiated Fortran is refused (flang's compare-and-swap
    loop), with a hint a Fortran user can act on: a reduction clause or a critical section."""
    r = run(["enzyme-fc", "-fopenmp", "-O2", str(HERE / "fortran" / "omp_atomic_real.f90"), "-o",
             str(tmp_path / "a")], cwd=tmp_path, check=False)
    assert r.returncode == 1 and "compare-and-swap on differentiated memory" in r.stderr, r.stderr
    assert "reduction(+:x) clause on the loop, or !$omp critical" in r.stderr, r.stderr
    assert "__atomic_fetch_add" not in r.stderr and "Traceback" not in r.stderr, r.stderr


THREADPRIVATE = r"""
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
static double partial;
#pragma omp threadprivate(partial)
double f(const double *x, int n) {
  double s = 0;
#pragma omp parallel reduction(+ : s)
  {
    partial = 0;
#pragma omp for
    for (int i = 0; i < n; i++) partial += x[i] * x[i];
    s += partial;
  }
  return s;
}
int main(void) {
  double x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, dx[8] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, 8);
  return 0;
}
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_openmp_threadprivate_refused_by_name(tmp_path, level):
    """Active data in a threadprivate variable is refused naming the construct (the message
    said to give the global a shadow, which a per-thread variable cannot take)."""
    (tmp_path / "tp.c").write_text(THREADPRIVATE)
    r = run(["enzyme-cc", "-fopenmp", level, "tp.c", "-o", "tp"], cwd=tmp_path, check=False)
    assert r.returncode == 1 and "stored to a thread-local variable (OpenMP threadprivate" in \
        r.stderr and "Traceback" not in r.stderr, r.stderr


def test_openmp_fortran_constant_captured_beside_active(tmp_path):
    """Arrays and a scalar passed enzyme_const, read in a Fortran parallel loop beside an active
    array: flang's record of captured addresses is unpacked into clang's fork arguments
    (lto/flang_omp.py), where the build was refused; the analytic gradient at 1 and 2 threads."""
    for level in ("-O0", "-O2"):
        run(["enzyme-fc", "-fopenmp", level, str(HERE / "fortran" / "omp_const_captured.f90"),
             "-o", str(tmp_path / "c")], cwd=tmp_path)
        for n in (1, 2):
            r = run([str(tmp_path / "c")], env=dict(os.environ, OMP_NUM_THREADS=str(n)))
            assert r.stdout.split()[:2] == ["bad", "0"], r.stdout
