"""MPI programs differentiated in reverse and forward mode (rules/mpi.py, rules/mpi_runtime.c).

Each program in tests/mpi_programs/ checks its derivatives against central finite differences
of the parallel primal and against the serial derivative, and forward against reverse mode
(mpi_check.h); it is built once per optimization level the way users build MPI code
(OMPI_CC=enzyme-cc mpicc, OMPI_CXX=enzyme-c++ mpicxx) and run on 1, 2 and 4 ranks."""
import os
import shutil

import pytest

from conftest import run

HERE = os.path.join(os.path.dirname(__file__), "mpi_programs")
pytestmark = pytest.mark.skipif(shutil.which("mpicc") is None or shutil.which("mpirun") is None,
                                reason="Open MPI (mpicc, mpirun) not installed")
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe"]
PROGRAMS = ["p2p.c", "collectives.c", "heat.cpp", "byte_halo.c", "datatype_variable.c",
            "prefix_sums.c"]


def _env(prog, opt=""):
    env = dict(os.environ)
    if opt.endswith("-ref"):       # the paper's Ref pipeline: AD of the unoptimized IR
        env["ENZYME_CC_PREOPT"] = "0"
    env["OMPI_CXX" if prog.endswith(".cpp") else "OMPI_CC"] = \
        "enzyme-c++" if prog.endswith(".cpp") else "enzyme-cc"
    return env


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Each (program, level) compiled once for all rank counts."""
    cache = {}

    def get(prog, opt):
        if (prog, opt) not in cache:
            d = tmp_path_factory.mktemp(prog.replace(".", "_") + opt)
            for f in (prog, "mpi_check.h"):
                shutil.copy(os.path.join(HERE, f), d / f)
            wrapper = "mpicxx" if prog.endswith(".cpp") else "mpicc"
            run([wrapper, opt.removesuffix("-ref"), "-g", prog, "-lm", "-o", "prog"], cwd=d,
                env=_env(prog, opt))
            cache[prog, opt] = d / "prog"
        return cache[prog, opt]
    return get


def _check_output(out):
    checks = [line for line in out.splitlines() if line.startswith("CHECK")]
    assert checks and "ALL OK" in out and "FAILED" not in out, out
    return checks


@pytest.mark.parametrize("ranks", [1, 2, 4])
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("prog", PROGRAMS)
def test_mpi_program(built, prog, opt, ranks):
    exe = built(prog, opt)
    r = run([*MPIRUN, "-np", str(ranks), str(exe)], cwd=exe.parent)
    checks = _check_output(r.stdout)
    # every rank's entries against finite differences (and the serial derivative), forward mode
    assert sum("_rev_fd[" in c for c in checks) >= 4 * ranks, r.stdout


@pytest.mark.parametrize("prog", PROGRAMS)
def test_mpi_program_ref_pipeline(built, prog):
    """AD of unoptimized IR with -g: the derivatives keep calls of primal functions that have
    debug info; inlined into main they need the marker's location (was a module that did not
    verify: internal error)."""
    exe = built(prog, "-O2-ref")
    r = run([*MPIRUN, "-np", "2", str(exe)], cwd=exe.parent)
    assert sum("_rev_fd[" in c for c in _check_output(r.stdout)) >= 8, r.stdout


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
@pytest.mark.parametrize("prog", ["p2p.c", "collectives.c"])
def test_mpi_program_valgrind(built, prog):
    """The runtime's records, temporaries and request table: no invalid access, nothing
    definitely lost (Open MPI's own start-up and shutdown leaks suppressed)."""
    exe = built(prog, "-O2")
    supp = os.path.join(HERE, "openmpi.supp")
    r = run([*MPIRUN, "-np", "2", "valgrind", "-q", "--num-callers=50", f"--suppressions={supp}",
             "--error-exitcode=1", "--leak-check=full", "--errors-for-leak-kinds=definite",
             str(exe)], cwd=exe.parent)
    _check_output(r.stdout)


def test_showme_build(tmp_path):
    """enzyme-cc $(mpicc --showme:compile) ... $(mpicc --showme:link)"""
    for f in ("p2p.c", "mpi_check.h"):
        shutil.copy(os.path.join(HERE, f), tmp_path / f)
    compile_flags = run(["mpicc", "--showme:compile"]).stdout.split()
    link_flags = run(["mpicc", "--showme:link"]).stdout.split()
    run(["enzyme-cc", "-O2", *compile_flags, "-c", "p2p.c", "-o", "p2p.o"], cwd=tmp_path)
    run(["enzyme-cc", "-O2", "p2p.o", *link_flags, "-lm", "-o", "prog"], cwd=tmp_path)
    _check_output(run([*MPIRUN, "-np", "2", "./prog"], cwd=tmp_path).stdout)


CMAKE = """\
cmake_minimum_required(VERSION 3.13)
project(mpidiff C CXX)
find_package(MPI REQUIRED COMPONENTS C CXX)
add_executable(p2p p2p.c)
target_link_libraries(p2p PRIVATE MPI::MPI_C m)
add_executable(heat heat.cpp)
target_link_libraries(heat PRIVATE MPI::MPI_CXX)
"""


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not installed")
def test_cmake_find_package_mpi(tmp_path):
    for f in ("p2p.c", "heat.cpp", "mpi_check.h"):
        shutil.copy(os.path.join(HERE, f), tmp_path / f)
    (tmp_path / "CMakeLists.txt").write_text(CMAKE)
    toolchain = run(["enzyme-cc", "--print-toolchain-file"]).stdout.strip()
    run(["cmake", "-S", ".", "-B", "build", f"-DCMAKE_TOOLCHAIN_FILE={toolchain}",
         "-DCMAKE_BUILD_TYPE=Release"], cwd=tmp_path)
    run(["cmake", "--build", "build"], cwd=tmp_path)
    for exe in ("p2p", "heat"):
        _check_output(run([*MPIRUN, "-np", "2", f"build/{exe}"], cwd=tmp_path).stdout)


HEAD = "#include <mpi.h>\ndouble __enzyme_autodiff(void *, ...);\n"
MAIN = ("int main(int c, char **v) { MPI_Init(&c, &v); double d = __enzyme_autodiff((void *)f, "
        "1.0); MPI_Finalize(); return d > 0; }\n")
ERRORS = {
    "derived_type": ("""double f(double x) {
  MPI_Datatype t;
  MPI_Type_contiguous(2, MPI_DOUBLE, &t);
  MPI_Type_commit(&t);
  double a[2] = {x, x * x}, b[2];
  MPI_Allreduce(a, b, 1, t, MPI_SUM, MPI_COMM_WORLD);
  return b[0] + b[1];
}
""", "no derivative rule for the MPI call 'MPI_Type_commit'"),
    "user_op": ("""static void prod(void *in, void *io, int *n, MPI_Datatype *t) { *(double *)io *= *(double *)in; }
double f(double x) {
  MPI_Op op;
  MPI_Op_create(prod, 1, &op);
  double a = x * x, b;
  MPI_Allreduce(&a, &b, 1, MPI_DOUBLE, op, MPI_COMM_WORLD);
  return b;
}
""", "no derivative rule for the MPI call 'MPI_Op_create'"),
    "prod_op": ("""double f(double x) {
  double a = x * x, b;
  MPI_Allreduce(&a, &b, 1, MPI_DOUBLE, MPI_PROD, MPI_COMM_WORLD);
  return b;
}
""", "reduction operation of MPI_Allreduce"),
    "no_rule": ("""double f(double x) {
  double a = x * x, b;
  int one = 1;
  MPI_Reduce_scatter(&a, &b, &one, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return b;
}
""", "no derivative rule for the MPI call 'MPI_Reduce_scatter'"),
    "scan_max": ("""double f(double x) {
  double a = x * x, b;
  MPI_Scan(&a, &b, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return b;
}
""", "MPI_Scan with MPI_MAX on float data has no derivative rule"),
    "one_sided": ("""MPI_Win win;
double f(double x) {
  double a = x * x;
  MPI_Win_fence(0, win);
  MPI_Put(&a, 1, MPI_DOUBLE, 0, 0, 1, MPI_DOUBLE, win);
  MPI_Win_fence(0, win);
  return a;
}
""", "one-sided MPI"),
    "any_source": ("""double f(double x) {
  double a = x * x, b = 0;
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  if (r == 0) MPI_Recv(&b, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  else MPI_Send(&a, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
  return b;
}
""", "MPI_Recv from MPI_ANY_SOURCE in reverse mode is not supported"),
    "bytes": ("""double f(double x) {
  double a = x * x, b;
  MPI_Allreduce(&a, &b, 8, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD);
  return b;
}
""", "as raw bytes (MPI_BYTE, MPI_PACKED"),
    "in_place_gather": ("""double f(double x) {
  double a[64] = {x * x};
  MPI_Gather(MPI_IN_PLACE, 1, MPI_DOUBLE, a, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return a[1];
}
""", "MPI_IN_PLACE in MPI_Gather is not supported"),
    # the reverse pass's adjoint Allreduce ran on the freed communicator (a segfault)
    "comm_freed": ("""double f(double x) {
  MPI_Comm sub;
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &sub);
  double a = x * x, b;
  MPI_Allreduce(&a, &b, 1, MPI_DOUBLE, MPI_SUM, sub);
  MPI_Comm_free(&sub);
  return b;
}
""", "'MPI_Comm_free' frees a communicator this function communicates over"),
}


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("case", sorted(ERRORS))
def test_mpi_refused(tmp_path, case, opt):
    body, message = ERRORS[case]
    (tmp_path / "e.c").write_text(HEAD + body + MAIN)
    r = run(["mpicc", opt, "-g", "e.c", "-o", "e"], cwd=tmp_path, check=False, env=_env("e.c"))
    assert r.returncode != 0
    assert "enzyme-cc: error: e.c:" in r.stderr and message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def _per_rank(tmp_path, src, opt, ranks):
    """Builds the C program src with mpicc at opt, runs it on `ranks` ranks: ({rank: the two
    numbers of its line `rank <r> <label> <a> <b>`}, the output)."""
    (tmp_path / "e.c").write_text(src)
    run(["mpicc", opt, "e.c", "-o", "e"], cwd=tmp_path, env=_env("e.c"))
    out = run([*MPIRUN, "-np", str(ranks), "./e"], cwd=tmp_path).stdout
    return {int(w[1]): (float(w[3]), float(w[4])) for w in map(str.split, out.splitlines())
            if w and w[0] == "rank"}, out


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_mpi_vector_forward_active_scalar(tmp_path, opt):
    """Vector forward mode through an Allreduce of a value computed from an active scalar
    argument (the programs of PROGRAMS check lanes of array arguments): b = P x^2 on every rank,
    lane k's tangent 2 P x dx_k."""
    src = HEAD.replace("__enzyme_autodiff", "__enzyme_fwddiff") + """#include <stdio.h>
int enzyme_width;
typedef struct { double d[2]; } V2;
V2 fwd2(void *, ...) __asm__("__enzyme_fwddiff");
double f(double x) {
  double a = x * x, b;
  MPI_Allreduce(&a, &b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return b;
}
int main(int c, char **v) {
  int r, p;
  MPI_Init(&c, &v);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  V2 d = fwd2((void *)f, enzyme_width, 2, 1.5, 1.0, -2.0 + r);
  printf("rank %d lanes %.12g %.12g\\n", r, d.d[0], d.d[1]);
  MPI_Finalize();
  return 0;
}
"""
    lanes, out = _per_rank(tmp_path, src, opt, 3)
    # d b = sum over ranks of 2 x dx_k(rank): lane 0 dx = 1 everywhere, lane 1 dx = r - 2
    assert sorted(lanes) == [0, 1, 2], out
    for got0, got1 in lanes.values():
        assert got0 == pytest.approx(3 * 2 * 1.5 * 1.0)
        assert got1 == pytest.approx(2 * 1.5 * (-2 - 1 + 0))


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_byte_message_into_a_read_buffer_stops(built, opt):
    """The adjoint bytes of an MPI_BYTE message come back into a send buffer whose shadow
    already holds adjoints (the program read the buffer after the send): bytes of unknown
    layout cannot be added, and the run stops saying so, not with a wrong gradient."""
    exe = built("byte_reread.c", opt)
    r = run([*MPIRUN, "-np", "2", str(exe)], cwd=exe.parent, check=False)
    assert r.returncode != 0
    assert "enzyme-cc: error: the adjoint of a byte message (MPI_BYTE, or a character type) " \
        "meets adjoint data already in the shadow of its send buffer" in r.stderr + r.stdout


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_forward_requests_completed_outside(built, opt):
    """A forward-mode derivative's requests completed by the program's own MPI_Wait(all/any/some)
    or MPI_Test(all/any/some): value and tangent arrive (the runtime interposes them through
    PMPI); MPI_Request_free on them is a clear error."""
    exe = built("wait_outside.c", opt)
    r = run([*MPIRUN, "-np", "2", str(exe)], cwd=exe.parent)
    assert "ALL OK" in r.stdout and r.stdout.count("CHECK") == 4, r.stdout
    for how in ("test", "testall", "testany", "testsome", "waitany", "waitsome"):
        r = run([*MPIRUN, "-np", "2", str(exe), how], cwd=exe.parent)
        assert "ALL OK" in r.stdout and r.stdout.count("CHECK") == 4, (how, r.stdout)
    r = run([*MPIRUN, "-np", "2", str(exe), "free"], cwd=exe.parent, check=False)
    assert r.returncode != 0
    assert "enzyme-cc: error: MPI_Request_free on a request that a forward-mode derivative " \
        "started" in r.stderr + r.stdout


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("ranks", [1, 2, 4])
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_hybrid_mpi_openmp(tmp_path_factory, opt, ranks, threads, _hybrid={}):
    """MPI + OpenMP in one program (mpicc -fopenmp), each rank running OpenMP threads."""
    if opt not in _hybrid:
        d = tmp_path_factory.mktemp("hybrid" + opt)
        for f in ("hybrid.c", "mpi_check.h"):
            shutil.copy(os.path.join(HERE, f), d / f)
        run(["mpicc", opt, "-fopenmp", "hybrid.c", "-lm", "-o", "prog"], cwd=d, env=_env("hybrid.c"))
        _hybrid[opt] = d / "prog"
    exe = _hybrid[opt]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    r = run([*MPIRUN, "-x", "OMP_NUM_THREADS", "-np", str(ranks), str(exe)], cwd=exe.parent,
            env=env)
    checks = _check_output(r.stdout)
    assert sum("_rev_fd[" in c for c in checks) == 4 * ranks, r.stdout


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_request_null_in_shadowed_memory(tmp_path, opt):
    """MPI_REQUEST_NULL (Open MPI's `&ompi_request_null`, a global of a type mpi.h never
    completes) stored into the request array of a struct that also holds a pointer to active
    data, in a function that writes through that pointer, as LULESH's CommRecv does with its
    Domain: any pointer loaded from the struct may be one stored there, so the global needs a
    shadow, and it is its own (the program cannot read or write its fields). Before, its shadow
    was a zero-initialized global of that incomplete type: an internal error at link time.
    Gradient of sum over ranks of e0 * e1, seeded on each of the 2 ranks, against the analytic
    one."""
    src = HEAD + """#include <stdio.h>
int enzyme_dup;
typedef struct { double *e; MPI_Request req[4]; } Domain;
__attribute__((noinline)) void post(Domain *d) {
  for (int k = 0; k < 4; k++) d->req[k] = MPI_REQUEST_NULL;
  d->e[1] = d->e[0] * d->e[1];
}
double f(Domain *d) {
  post(d);
  double a = d->e[1], s;
  MPI_Allreduce(&a, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return s;
}
int main(int c, char **v) {
  int r;
  MPI_Init(&c, &v);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  double e[2] = {1.5 + r, 2.0}, se[2] = {0, 0};
  Domain d = {e}, sd = {se};
  __enzyme_autodiff((void *)f, enzyme_dup, &d, &sd);
  printf("rank %d grad %.12g %.12g\\n", r, se[0], se[1]);
  MPI_Finalize();
  return 0;
}
"""
    grads, out = _per_rank(tmp_path, src, opt, 2)
    assert sorted(grads) == [0, 1], out
    for r, (g0, g1) in grads.items():
        assert g0 == pytest.approx(2 * 2.0) and g1 == pytest.approx(2 * (1.5 + r)), out


NEVER_TAKEN_PRODUCT = HEAD + """#include <stdio.h>
#include <stdlib.h>
/* Nek5000's gop: the reduction a flag picks; a product has no derivative rule */
__attribute__((noinline)) void product_of(double *v) {
  MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_PROD, MPI_COMM_WORLD);
}
__attribute__((noinline)) void gop(double *v, char how) {
  if (how == '+') MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  else if (how == 'M') MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  else if (how == 'm') MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  else product_of(v);
}
char how = '+';
double f(double x) {
  double v = x * x;
  gop(&v, how);
  return v;
}
int main(int c, char **v) {
  int r;
  MPI_Init(&c, &v);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  if (c > 1) how = v[1][0];
  double d = __enzyme_autodiff((void *)f, 1.0 + r);
  printf("rank %d grad %.12g 0\\n", r, d);
  MPI_Finalize();
  return 0;
}
"""


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_reduction_without_rule_stops_only_where_it_runs(tmp_path, opt):
    """A product reduction (no derivative rule) in a branch the gradient does not take, in a
    function of its own (Nek5000's gop): the derivative builds and is right (was a link
    error); where the run takes that branch, the derivative stops with the refusal's message
    and location."""
    got, out = _per_rank(tmp_path, NEVER_TAKEN_PRODUCT, opt, 2)
    # every rank's f is sum_q x_q^2 and seeds 1: d/dx_r = 2 ranks x 2 x_r
    assert got == {0: (4.0, 0.0), 1: (8.0, 0.0)}, out
    r = run([*MPIRUN, "-np", "2", "./e", "*"], cwd=tmp_path, check=False)
    assert r.returncode != 0 and "grad" not in r.stdout
    assert "enzyme-cc: error: " in r.stderr and "the reduction operation of MPI_Allreduce " \
        "('@ompi_mpi_op_prod') is not MPI_SUM" in r.stderr, r.stderr


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_global_heap_buffers_as_message_buffers(tmp_path, opt):
    """miniAMR's send_buff/recv_buff: program-wide pointers (not static) to heap buffers that
    its own counting allocator hands out, grown inside the differentiated code (free, then
    allocate again) and used as the send and receive buffers of a halo exchange. Without any
    __enzyme_shadow query the derivative gives them shadow blocks; was "the receive buffer of
    MPI_Irecv has no shadow". Gradient of sum_r (x_r x_{r-1})^2 against the analytic one."""
    src = HEAD + """#include <stdio.h>
#include <stdlib.h>
int enzyme_dup;
double *send_buff, *recv_buff;
int buff_size, nmalloc;
__attribute__((noinline)) void *ma_malloc(size_t n) {
  void *p = malloc(n);
  if (!p) { fprintf(stderr, "no memory\\n"); exit(1); }
  nmalloc++;
  return p;
}
__attribute__((noinline)) void check_buff_size(int n) {
  if (n <= buff_size) return;
  free(send_buff);
  free(recv_buff);
  send_buff = ma_malloc(n * sizeof(double));
  recv_buff = ma_malloc(n * sizeof(double));
  buff_size = n;
}
double f(double *x, int n) {
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  check_buff_size(n + 1);
  for (int i = 0; i < n; i++) send_buff[i] = x[i];
  MPI_Request q[2];
  MPI_Irecv(recv_buff, n, MPI_DOUBLE, (r + p - 1) % p, 3, MPI_COMM_WORLD, &q[0]);
  MPI_Isend(send_buff, n, MPI_DOUBLE, (r + 1) % p, 3, MPI_COMM_WORLD, &q[1]);
  MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
  double s = 0;
  for (int i = 0; i < n; i++) s += (x[i] * recv_buff[i]) * (x[i] * recv_buff[i]);
  return s;
}
int main(int c, char **v) {
  int r;
  MPI_Init(&c, &v);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  check_buff_size(1);
  double x[2] = {1.0 + r, 0.5 - r}, dx[2] = {0, 0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, 2);
  printf("rank %d grad %.12g %.12g\\n", r, dx[0], dx[1]);
  MPI_Finalize();
  return 0;
}
"""
    for ranks in (1, 3):
        got, out = _per_rank(tmp_path, src, opt, ranks)
        assert sorted(got) == list(range(ranks)), out
        for r, (g0, g1) in got.items():
            # x_r's terms: its own (x_r y_r)^2 with y_r = x_{r-1}, and the right neighbour's
            xs = [(1.0 + q, 0.5 - q) for q in range(ranks)]
            left, right = xs[(r - 1) % ranks], xs[(r + 1) % ranks]
            want = [2 * xs[r][i] * left[i] ** 2 + 2 * right[i] ** 2 * xs[r][i] for i in (0, 1)]
            assert (g0, g1) == pytest.approx(want), out


MARKER_THROUGH_POINTER = r"""#include <stdio.h>
#include <mpi.h>
extern int enzyme_dup;
void __enzyme_autodiff(void *, ...);
static int rank, nranks;
static MPI_Request reqs[2];
__attribute__((noinline)) static void post(double *u) {
  MPI_Irecv(&u[0], 1, MPI_DOUBLE, (rank + nranks - 1) % nranks, 5, MPI_COMM_WORLD, &reqs[0]);
  MPI_Isend(&u[1], 1, MPI_DOUBLE, (rank + 1) % nranks, 5, MPI_COMM_WORLD, &reqs[1]);
}
__attribute__((noinline)) static void complete(void) { MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE); }
double ring(double *x) { double u[2]; u[1] = x[0]; post(u); complete(); return u[0] * u[1]; }
double square(double *x) { return x[0] * x[0]; }
__attribute__((noinline)) void grad(double (*f)(double *), double *x, double *dx) {
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx);
}
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  double x = 1.0 + rank, dx = 0, ds = 0;
  grad(square, &x, &ds);
  grad(ring, &x, &dx);
  printf("rank %d grads %.12g %.12g\n", rank, dx, ds);
  MPI_Finalize();
  return 0;
}
"""


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_marker_through_a_function_pointer_communicates(tmp_path, opt):
    """A gradient helper handed the objective as a function pointer: the call trees of every
    function the pointer may hold take part in the derivative's communication (only the first
    candidate's did: the Waitall in a callee of the other ran as primal code, and every rank
    aborted, "the request of an MPI_Isend was not completed")."""
    got, out = _per_rank(tmp_path, MARKER_THROUGH_POINTER, opt, 2)
    # d/dx_r of sum_r x_r x_{r-1}: x_{r-1} + x_{r+1}; on 2 ranks both neighbours are the other
    assert got == {0: (4.0, 2.0), 1: (2.0, 4.0)}, out


# ---- Fortran's bindings (rules/mpi_fortran.c) and Open MPI's Fortran headers for flang -------
FORTRAN_MPI = pytest.mark.skipif(shutil.which("mpif90") is None, reason="mpif90 not installed")


def _fortran_env():
    return dict(os.environ, OMPI_FC="enzyme-fc")


@pytest.fixture(scope="module")
def fortran_built(tmp_path_factory):
    """halo.f90 built by `OMPI_FC=enzyme-fc mpif90` as it is (`include 'mpif.h'`), and with
    `use mpi` instead: Debian's Open MPI was made for gfortran, so flang reads neither header
    without enzyme-fc's own (enzyme_cc/fortran_mpi_headers.py)."""
    cache = {}

    def get(header, opt):
        if (header, opt) not in cache:
            d = tmp_path_factory.mktemp(f"halo_{header}{opt}")
            text = open(os.path.join(HERE, "halo.f90")).read()
            if header == "use":
                text = text.replace("  implicit none\n  include 'mpif.h'\n",
                                    "  use mpi\n  implicit none\n", 1)
                assert "use mpi\n" in text
            (d / "halo.f90").write_text(text)
            run(["mpif90", opt, "-g", "halo.f90", "-o", "halo"], cwd=d, env=_fortran_env())
            cache[header, opt] = d / "halo"
        return cache[header, opt]
    return get


@FORTRAN_MPI
@pytest.mark.parametrize("ranks", [1, 2, 4])
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_fortran_mpi_bindings(fortran_built, opt, ranks):
    """MPI_IRECV/ISEND/TEST/TESTALL/WAITALL, SENDRECV with MPI_STATUS_IGNORE, BCAST, REDUCE and
    ALLREDUCE with MPI_IN_PLACE from Fortran: every rank's gradient against central differences
    of its own entries, forward mode against the gradient."""
    exe = fortran_built("include", opt)
    r = run([*MPIRUN, "-np", str(ranks), str(exe)], cwd=exe.parent)
    checks = [ln for ln in r.stdout.splitlines() if ln.startswith("CHECK")]
    assert "FAILED" not in r.stdout and len(checks) == 4 * ranks + 1, r.stdout
    assert sum(" rev_fd " in c for c in checks) == 4 * ranks


@FORTRAN_MPI
def test_fortran_mpi_bindings_use_mpi(fortran_built):
    exe = fortran_built("use", "-O2")
    r = run([*MPIRUN, "-np", "2", str(exe)], cwd=exe.parent)
    checks = [ln for ln in r.stdout.splitlines() if ln.startswith("CHECK")]
    assert "FAILED" not in r.stdout and len(checks) == 9, r.stdout


FORTRAN_REFUSED_HEAD = """\
module m
  use iso_c_binding
  implicit none
  include 'mpif.h'
  integer(c_int), bind(c, name="enzyme_dup") :: enzyme_dup
contains
  function obj(x) bind(c, name="obj") result(f)
    real(c_double), intent(in) :: x(3)
    real(c_double) :: f, s, t
    integer :: ierr, req, st(MPI_STATUS_SIZE)
    logical :: done
    s = sum(x ** 2)
"""
FORTRAN_REFUSED_TAIL = """\
    f = t
  end function
end module
program p
  use m
  implicit none
  interface
    subroutine grad(fp, d1, x, dx) bind(c, name="__enzyme_autodiff")
      import :: c_funptr, c_int, c_double
      type(c_funptr), value :: fp
      integer(c_int), value :: d1
      real(c_double) :: x(*), dx(*)
    end subroutine
  end interface
  real(c_double) :: x(3) = [1d0, 2d0, 3d0], dx(3) = 0
  integer :: ierr
  call mpi_init(ierr)
  call grad(c_funloc(obj), enzyme_dup, x, dx)
  print *, dx
  call mpi_finalize(ierr)
end program
"""
FORTRAN_REFUSED = {
    # a binding without a derivative: named, with the Fortran calls that have one
    "no_rule": (
        "    call mpi_allreduce(s, t, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)\n"
        "    call mpi_reduce_scatter(s, t, [1], MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, "
        "ierr)\n",
        ["e.f90:14:", "'mpi_reduce_scatter_'",
         "Fortran's MPI_SEND/RECV, ISEND/IRECV, WAIT/TEST (ALL, ANY, SOME)"]),
}


@FORTRAN_MPI
@pytest.mark.parametrize("case", sorted(FORTRAN_REFUSED))
def test_fortran_mpi_refused(tmp_path, case):
    body, messages = FORTRAN_REFUSED[case]
    (tmp_path / "e.f90").write_text(FORTRAN_REFUSED_HEAD + body + FORTRAN_REFUSED_TAIL)
    r = run(["mpif90", "-O2", "-g", "e.f90", "-o", "e"], cwd=tmp_path, check=False,
            env=_fortran_env())
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert all(m in r.stderr for m in messages), r.stderr


@FORTRAN_MPI
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_fortran_allreduce_into_a_dummy(tmp_path, opt):
    """A noalias dummy's shadow, taped by the forward sweep and handed to MPI_Allreduce's
    adjoint, is read back after that call (the reverse function's parameters lose noalias:
    generate.without_noalias)."""
    shutil.copy(os.path.join(HERE, "dummy_allreduce.f90"), tmp_path / "d.f90")
    run(["mpif90", opt, "d.f90", "-o", "d"], cwd=tmp_path, env=_fortran_env())
    for ranks in (1, 2):
        out = run([*MPIRUN, "-np", str(ranks), "./d"], cwd=tmp_path).stdout
        assert out.count("CHECK rank") == ranks and "FAILED" not in out, out


@FORTRAN_MPI
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_fortran_waitany_testany_testsome_waitsome(tmp_path, opt):
    """MPI_WAITANY, TESTANY, TESTSOME and WAITSOME from Fortran (SNAP's sweeps use TESTSOME),
    their indices from 1: the analytic gradient on 1 to 3 ranks."""
    shutil.copy(os.path.join(HERE, "requests_any_some.f90"), tmp_path / "r.f90")
    run(["mpif90", opt, "r.f90", "-o", "r"], cwd=tmp_path, env=_fortran_env())
    for ranks in (1, 2, 3):
        out = run([*MPIRUN, "-np", str(ranks), "./r"], cwd=tmp_path).stdout
        assert out.count("CHECK rank") == ranks and "FAILED" not in out, out


@FORTRAN_MPI
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_fortran_datatype_in_a_variable(tmp_path, opt):
    """NPB's dp_type: a real datatype held in a variable is dispatched to the float types the
    rules differentiate (rules/mpi_fortran.c TYPED), an integer one passes its run-time check,
    and a complex one stops the derivative with a message (rules/mpi_dynamic.c)."""
    shutil.copy(os.path.join(HERE, "datatype_variable.f90"), tmp_path / "d.f90")
    run(["mpif90", opt, "d.f90", "-o", "d"], cwd=tmp_path, env=_fortran_env())
    for ranks in (1, 3):
        out = run([*MPIRUN, "-np", str(ranks), "./d"], cwd=tmp_path).stdout
        assert out.count("CHECK rank") == ranks and "FAILED" not in out, out
    r = run([*MPIRUN, "-np", "2", "./d", "complex"], cwd=tmp_path, check=False)
    assert r.returncode != 0 and "CHECK" not in r.stdout
    assert "MPI_ALLREDUCE in differentiated code was given a datatype held in a variable " \
        "that is neither integer data nor MPI_DOUBLE_PRECISION" in r.stderr, r.stderr


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_c_datatype_in_a_variable_checked_at_run_time(tmp_path, opt):
    """A C datatype held in a variable (tests/mpi_programs/datatype_variable.c differentiates
    the float and integer ones) that turns out to be a derived type stops the derivative with a
    message at run time (rules/mpi_dynamic.c); the primal runs."""
    src = HEAD + """#include <stdio.h>
MPI_Datatype pair;
double f(double x) {
  double a[2] = {x, x * x};
  MPI_Bcast(a, 1, pair, 0, MPI_COMM_WORLD);
  return a[0] + a[1];
}
int main(int c, char **v) {
  MPI_Init(&c, &v);
  MPI_Type_contiguous(2, MPI_DOUBLE, &pair);
  MPI_Type_commit(&pair);
  printf("primal %g\\n", f(2.0));
  double d = c > 1 ? __enzyme_autodiff((void *)f, 2.0) : 0;
  printf("gradient %g\\n", d);
  MPI_Finalize();
}
"""
    (tmp_path / "e.c").write_text(src)
    run(["mpicc", opt, "e.c", "-o", "e"], cwd=tmp_path, env=_env("e.c"))
    out = run([*MPIRUN, "-np", "2", "./e"], cwd=tmp_path).stdout
    assert out.count("primal 6") == 2, out
    r = run([*MPIRUN, "-np", "2", "./e", "grad"], cwd=tmp_path, check=False)
    assert r.returncode != 0 and "gradient" not in r.stdout, r.stdout
    assert "MPI_BCAST in differentiated code was given a datatype held in a variable that " \
        "is neither integer data nor" in r.stderr, r.stderr


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_test_and_testall_complete_requests(tmp_path, opt):
    """MPI_Test in a loop and MPI_Testall (then MPI_Waitall where it did not complete) in C:
    where they complete, the reverse sweep communicates the requests' adjoints as after a
    wait; forward mode's tangent arrives with the message. A ring: each rank receives its left
    neighbour's x^2 and 3 x; f = sum over ranks of u0 * u1 * x."""
    _check_ring(tmp_path, _ring("int done = 0;", """\
  while (!done) MPI_Test(&q[0], &done, MPI_STATUS_IGNORE);
  MPI_Testall(3, q + 1, &done, MPI_STATUSES_IGNORE);
  if (!done) MPI_Waitall(3, q + 1, MPI_STATUSES_IGNORE);
  return u[0] * u[1] * x[0];"""), opt)


def _ring(decls, completion):
    """A ring program: each rank receives its left neighbour's x^2 and 3 x by MPI_Irecv and
    MPI_Isend (requests q[0..3]), completes them with `completion` (which returns f), and
    prints its gradient and tangent."""
    return HEAD + """#include <stdio.h>
int enzyme_dup;
double __enzyme_fwddiff(void *, ...);
double f(double *x) {
  int r, n;
  """ + decls + """
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  double s[2] = {x[0] * x[0], 3 * x[0]}, u[2];
  MPI_Request q[4];
  MPI_Irecv(&u[0], 1, MPI_DOUBLE, (r + n - 1) % n, 1, MPI_COMM_WORLD, &q[0]);
  MPI_Irecv(&u[1], 1, MPI_DOUBLE, (r + n - 1) % n, 2, MPI_COMM_WORLD, &q[1]);
  MPI_Isend(&s[0], 1, MPI_DOUBLE, (r + 1) % n, 1, MPI_COMM_WORLD, &q[2]);
  MPI_Isend(&s[1], 1, MPI_DOUBLE, (r + 1) % n, 2, MPI_COMM_WORLD, &q[3]);
""" + completion + """
}
int main(int c, char **v) {
  int r;
  MPI_Init(&c, &v);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  double x = 1.0 + r, dx = 0, one = 1.0;
  __enzyme_autodiff((void *)f, enzyme_dup, &x, &dx);
  double t = __enzyme_fwddiff((void *)f, enzyme_dup, &x, &one);
  printf("rank %d grad %.12g %.12g\\n", r, dx, t);
  MPI_Finalize();
  return 0;
}
"""


def _check_ring(tmp_path, src, opt):
    """The gradient and tangent of the ring objectives below, on 1 and 2 ranks."""
    for ranks in (1, 2):
        grads, out = _per_rank(tmp_path, src, opt, ranks)
        assert sorted(grads) == list(range(ranks)), out
        xs = [1.0 + r for r in range(ranks)]
        for r, (g, t) in grads.items():
            left, right = xs[(r - 1) % ranks], xs[(r + 1) % ranks]
            # d/dx_r of x_r * 3 x_l^3 (its own term) + x_right * 3 x_r^3 (its right's)
            own = 3 * left ** 3 if ranks > 1 else 12 * xs[r] ** 3
            want = own + (9 * right * xs[r] ** 2 if ranks > 1 else 0)
            assert g == pytest.approx(want), out
            # the tangent of rank r's own f with every x_i moved by 1
            tan = 3 * left ** 3 + 9 * xs[r] * left ** 2 if ranks > 1 else 12 * xs[r] ** 3
            assert t == pytest.approx(tan), out


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_waitany_testany_testsome_waitsome_complete_requests(tmp_path, opt):
    """The ring of test_test_and_testall_complete_requests completed by MPI_Waitany, then
    MPI_Testany until it completes one, MPI_Testsome until none is left, and MPI_Waitsome on
    requests all null (MPI_UNDEFINED): each completion communicates the adjoints in reverse."""
    _check_ring(tmp_path, _ring("int idx, flag = 0, count, ids[4], left = 4;", """\
  MPI_Waitany(4, q, &idx, MPI_STATUS_IGNORE);
  left--;
  while (!flag) MPI_Testany(4, q, &idx, &flag, MPI_STATUS_IGNORE);
  left--;
  while (left > 0) {
    MPI_Testsome(4, q, &count, ids, MPI_STATUSES_IGNORE);
    left -= count;
  }
  MPI_Waitsome(4, q, &count, ids, MPI_STATUSES_IGNORE);
  return count == MPI_UNDEFINED ? u[0] * u[1] * x[0] : 0.0;"""), opt)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_request_never_completed_names_the_message(tmp_path, opt):
    """An MPI_Isend whose request the differentiated code never completes (SNAP's last sends of
    a sweep): the reverse pass stops with a message that names the call and the message's peer,
    tag and count."""
    src = HEAD + """#include <stdio.h>
double f(double x) {
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  double s[3] = {x, x * x, 2 * x}, u[3];
  MPI_Request q[2];
  MPI_Irecv(u, 3, MPI_DOUBLE, (r + n - 1) % n, 7, MPI_COMM_WORLD, &q[0]);
  MPI_Isend(s, 3, MPI_DOUBLE, (r + 1) % n, 7, MPI_COMM_WORLD, &q[1]);
  MPI_Wait(&q[0], MPI_STATUS_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);
  return u[0] * u[1] + u[2];
}
int main(int c, char **v) {
  MPI_Init(&c, &v);
  printf("gradient %g\\n", __enzyme_autodiff((void *)f, 2.0));
  MPI_Finalize();
  return 0;
}
"""
    (tmp_path / "e.c").write_text(src)
    run(["mpicc", opt, "e.c", "-o", "e"], cwd=tmp_path, env=_env("e.c"))
    r = run([*MPIRUN, "-np", "2", "./e"], cwd=tmp_path, check=False)
    assert r.returncode != 0 and "gradient" not in r.stdout, r.stdout
    assert "the request of an MPI_Isend (to rank 1, tag 7, 3 elements) was not completed" in \
        r.stderr or "the request of an MPI_Isend (to rank 0, tag 7, 3 elements) was not " \
        "completed" in r.stderr, r.stderr


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_program_defines_its_own_waitany(tmp_path, opt):
    """A program that defines MPI_Waitany itself (PMPI-style, miniAMR's test harness) beside
    differentiated nonblocking MPI: the runtime's interposers are weak, so the program's own
    wins (was an internal error, "symbol multiply defined")."""
    src = HEAD + """#include <stdio.h>
int enzyme_dup;
int waited;
int MPI_Waitany(int n, MPI_Request *r, int *index, MPI_Status *status) {
  waited++;
  for (int i = 0; i < n; i++)
    if (r[i] != MPI_REQUEST_NULL) { *index = i; return PMPI_Wait(&r[i], status); }
  *index = MPI_UNDEFINED;
  return MPI_SUCCESS;
}
void f(double *x, double *y) {
  MPI_Request q[2];
  int index;
  MPI_Irecv(y, 1, MPI_DOUBLE, 0, 0, MPI_COMM_SELF, &q[0]);
  MPI_Isend(x, 1, MPI_DOUBLE, 0, 0, MPI_COMM_SELF, &q[1]);
  MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
  y[0] = y[0] * y[0];
}
int main(int c, char **v) {
  MPI_Init(&c, &v);
  double x = 3, dx = 0, y = 0, dy = 1;
  MPI_Request q = MPI_REQUEST_NULL;
  int index;
  MPI_Waitany(1, &q, &index, MPI_STATUS_IGNORE);
  __enzyme_autodiff((void *)f, enzyme_dup, &x, &dx, enzyme_dup, &y, &dy);
  printf("rank 0 grad %g %d\\n", dx, waited);
  MPI_Finalize();
  return 0;
}
"""
    grads, out = _per_rank(tmp_path, src, opt, 1)
    assert grads == {0: (6.0, 1.0)}, out


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_reduction_in_a_variable_without_a_rule_stops_at_run_time(tmp_path, opt):
    """A reduction held in a variable is dispatched over MPI_SUM, MAX and MIN (datatype_variable.c
    differentiates MPI_SUM held in a context); one without a derivative (MPI_PROD) on float data
    stops the derivative with a message where it runs, not at the link (Nek5000's gop has a
    product branch it rarely takes); on integer data it runs."""
    src = HEAD + """#include <stdio.h>
MPI_Op chosen;
double f(double x) {
  double a = x * x, b;
  int k = 3, m;
  MPI_Allreduce(&k, &m, 1, MPI_INT, chosen, MPI_COMM_WORLD);
  MPI_Allreduce(&a, &b, 1, MPI_DOUBLE, chosen, MPI_COMM_WORLD);
  return b * m;
}
int main(int c, char **v) {
  MPI_Init(&c, &v);
  chosen = c > 1 ? MPI_PROD : MPI_SUM;
  printf("gradient %g\\n", __enzyme_autodiff((void *)f, 2.0));
  MPI_Finalize();
  return 0;
}
"""
    (tmp_path / "e.c").write_text(src)
    run(["mpicc", opt, "e.c", "-o", "e"], cwd=tmp_path, env=_env("e.c"))
    out = run([*MPIRUN, "-np", "2", "./e"], cwd=tmp_path).stdout
    assert out.split().count("gradient") == 2 and "48" in out.split(), out   # 2 ranks x 4 x 6
    r = run([*MPIRUN, "-np", "2", "./e", "prod"], cwd=tmp_path, check=False)
    assert r.returncode != 0 and "gradient" not in r.stdout, r.stdout
    assert "MPI_ALLREDUCE in differentiated code was given a datatype" in r.stderr and \
        "or float data with a reduction held in a variable other than MPI_SUM" in r.stderr, r.stderr


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_cxx_datatype_in_a_variable_called_by_invoke(tmp_path, opt):
    """C++ calls MPI by `invoke` where a destructor is due (a std::vector alive across the
    call): a datatype held in a variable is dispatched there too (was refused)."""
    (tmp_path / "v.cpp").write_text("""#include <mpi.h>
#include <cstdio>
#include <vector>
extern "C" double __enzyme_autodiff(void *, ...);
extern int enzyme_dup, enzyme_const;
static MPI_Datatype real_t;
double f(const double *x, int n) {
  std::vector<double> y(x, x + n);
  double s = 0, t = 0;
  for (double v : y) s += v * v * v;
  MPI_Allreduce(&s, &t, 1, real_t, MPI_SUM, MPI_COMM_WORLD);
  return t;
}
int main(int c, char **v) {
  MPI_Init(&c, &v);
  real_t = c > 5 ? MPI_FLOAT : MPI_DOUBLE;
  double x[3] = {1, 2, 3}, dx[3] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, 3);
  printf("grad %g %g %g\\n", dx[0], dx[1], dx[2]);
  MPI_Finalize();
}
""")
    run(["mpicxx", opt, "v.cpp", "-o", "v"], cwd=tmp_path, env=_env("v.cpp"))
    out = run([*MPIRUN, "-np", "2", "./v"], cwd=tmp_path).stdout
    # every rank seeds its sum over both ranks: 2 x 3 x^2
    assert out.split().count("grad") == 2 and out.split()[1:4] == ["6", "24", "54"], out
