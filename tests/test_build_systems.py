"""Build-system tests: the wrappers used the way clang users use clang.

The examples (Makefile + static library, CMake, Fortran, C + Fortran) are copied to a temporary
directory, built and run, and their gradients compared with the exact values they print.
Configure-style probes compare the wrappers' output, exit codes and side files with clang-22's.
"""
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import BIN, ROOT, run

EXAMPLES = os.path.join(ROOT, "examples")
PAIR = re.compile(r"(-?\d+\.\d+(?:[eE][-+]?\d+)?)\s+exact\s+(-?\d+\.\d+(?:[eE][-+]?\d+)?)")


def check_pairs(out: str, count: int, rtol=1e-7):
    """Every 'VALUE exact VALUE' line agrees; `count` of them."""
    pairs = [(float(a), float(b)) for a, b in PAIR.findall(out)]
    assert len(pairs) == count, out
    for got, exact in pairs:
        assert abs(got - exact) <= rtol * max(1.0, abs(exact)), out


def copy_example(name, dest):
    dst = os.path.join(dest, name)
    shutil.copytree(os.path.join(EXAMPLES, name), dst)
    return dst


def both(cmd_tail, cwd, input=None, env=None):
    """(enzyme-cc result, clang-22 result) of the same command line."""
    e = run(["enzyme-cc", *cmd_tail], cwd=cwd, check=False, input=input, env=env)
    c = run(["clang-22", *cmd_tail], cwd=cwd, check=False, input=input, env=env)
    return e, c


def no_traceback(r):
    assert "Traceback" not in r.stderr, r.stderr


# ---------------------------------------------------------------------------------------------
# The examples
# ---------------------------------------------------------------------------------------------

def test_makefile_static_library_with_gnu_ar(tmp_path):
    assert "GNU ar" in run(["ar", "--version"]).stdout   # plain binutils ar, LLVM 14 plugin and all
    d = copy_example("makefile-static-lib", tmp_path)
    env = dict(os.environ, CC="enzyme-cc")
    run(["make", "-j2"], cwd=d, env=env)
    index = run(["nm", "-s", "libkernels.a"], cwd=d).stdout
    assert "rosenbrock in rosenbrock.o" in index and "chain_energy in chain.o" in index
    check_pairs(run(["./gradient"], cwd=d).stdout, 12)


def test_makefile_primal_target_same_with_plain_clang(tmp_path):
    """No marker calls: enzyme-cc's build gives the very binary clang-22 gives."""
    outs, exes = [], []
    for cc in ("clang-22", "enzyme-cc"):
        d = copy_example("makefile-static-lib", tmp_path / cc)
        run(["make", "-j2", f"CC={cc}", "primal"], cwd=d)
        outs.append(run(["./primal"], cwd=d).stdout)
        exes.append(open(os.path.join(d, "primal"), "rb").read())
    assert "rosenbrock   355.7" in outs[0]
    assert outs[0] == outs[1]
    assert exes[0] == exes[1]


def _cmake_implicit(build, lang):
    """What CMake detected about the compiler; enzyme-c++ adds its own headers' directory
    (<enzyme/enzyme>) to C++ compiles, which is left out here."""
    from enzyme_cc.toolchain import include_dir
    path = os.path.join(build, "CMakeFiles", "3.25.1", f"CMake{lang}Compiler.cmake")
    with open(path) as f:
        return [l.replace(include_dir() + ";", "") for l in f
                if "IMPLICIT" in l or "COMPILER_ID " in l or "COMPILER_VERSION" in l]


def test_cmake_project_with_toolchain_file(tmp_path):
    toolchain = run(["enzyme-cc", "--print-toolchain-file"]).stdout.strip()
    d = copy_example("cmake-project", tmp_path)
    run(["cmake", "-S", d, "-B", "build", f"-DCMAKE_TOOLCHAIN_FILE={toolchain}"], cwd=tmp_path)
    run(["cmake", "--build", "build", "-j2"], cwd=tmp_path)
    check_pairs(run(["./build/gradients"], cwd=tmp_path).stdout, 5)
    cache = (tmp_path / "build" / "CMakeCache.txt").read_text()
    assert re.search(r"CMAKE_AR:FILEPATH=.*llvm-ar-22", cache)
    assert re.search(r"^CMAKE_C_COMPILER:\w+=.*enzyme-cc$", cache, re.M)
    # CMake's compiler identification and ABI detection (which parses the link's -v output)
    # find what they find for clang-22 itself
    env = dict(os.environ, CC="clang-22", CXX="clang++-22")
    run(["cmake", "-S", d, "-B", "plain"], cwd=tmp_path, env=env)
    for lang in ("C", "CXX"):
        assert _cmake_implicit(tmp_path / "build", lang) == _cmake_implicit(tmp_path / "plain", lang)


def test_fortran_example(tmp_path):
    d = copy_example("fortran", tmp_path)
    run(["make"], cwd=d)
    check_pairs(run(["./fmain"], cwd=d).stdout, 2)


def test_mixed_c_fortran_example(tmp_path):
    d = copy_example("mixed-c-fortran", tmp_path)
    run(["make", "-j2"], cwd=d)
    out = run(["./mixed"], cwd=d).stdout
    check_pairs(out, 8)
    # the same program in one command: C and Fortran sources, linked through enzyme-fc
    run(["enzyme-fc", "-O2", "cmain.c", "kernel.f90", "-o", "mixed2"], cwd=d)
    assert run(["./mixed2"], cwd=d).stdout == out


# ---------------------------------------------------------------------------------------------
# Configure-style probes: the same output, side files and exit codes as clang-22
# ---------------------------------------------------------------------------------------------

HELLO = '#include <stdio.h>\n#define GREETING "hello"\nint main(void) { puts(GREETING); return 0; }\n'


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    d = tmp_path_factory.mktemp("probe")
    (d / "hello.c").write_text(HELLO)
    (d / "bad.c").write_text("int main(void) { return 1 +; }\n")
    return d


def test_probe_compile_then_link(probe):
    run(["enzyme-cc", "-c", "hello.c", "-o", "conftest.o"], cwd=probe)
    run(["enzyme-cc", "conftest.o", "-o", "conftest"], cwd=probe)
    assert run(["./conftest"], cwd=probe).stdout == "hello\n"


@pytest.mark.parametrize("args", [["--version"], ["-dumpmachine"], ["-print-search-dirs"],
                                  ["-print-prog-name=ld"], ["-print-file-name=libc.so"], ["-v"],
                                  ["-E", "hello.c"], ["-E", "-dM", "-x", "c", "/dev/null"],
                                  ["-M", "hello.c"], ["-MM", "hello.c"], [],
                                  ["-Werror", "-c", "hello.c", "-o", "unused.o", "-lm"],
                                  ["-c", "hello.c", "-o", "unused.o", "-L.", "-Wl,-x"]],
                         ids=lambda a: " ".join(a) or "no-args")
def test_probe_same_as_clang(probe, args):
    e, c = both(args, probe)
    assert (e.returncode, e.stdout, e.stderr) == (c.returncode, c.stdout, c.stderr)


def test_probe_verbose_shows_clang_version(probe):
    e, c = both(["-v"], probe)
    assert "clang version 22" in e.stderr
    r = run(["enzyme-cc", "-v", "hello.c", "-o", "hello_v"], cwd=probe)
    assert "clang version 22" in r.stderr
    assert re.search(r'^ "[^"]*ld[^"]*" ', r.stderr, re.M), r.stderr   # the linker's command


@pytest.mark.parametrize("form", [["hello.i"], ["-x", "cpp-output", "hello.i"]], ids=" ".join)
def test_preprocessed_source_under_werror(probe, form):
    """Preprocessed source under -Werror: enzyme-cc's own -isystem, which clang reports unused
    there, made the compile fail where clang's succeeds (ccache without its second cpp run)."""
    run(["enzyme-cc", "-E", "hello.c", "-o", "hello.i"], cwd=probe)
    e, c = both(["-Werror", "-c", *form, "-o", "unused.o"], probe)
    assert (e.returncode, e.stderr) == (c.returncode, c.stderr) == (0, "")


def test_probe_preprocess_macro_and_stdin(probe):
    src = "int value = ANSWER;\n"
    e, c = both(["-E", "-DANSWER=42", "-x", "c", "-"], probe, input=src)
    assert e.returncode == 0 and e.stdout == c.stdout
    assert "int value = 42;" in e.stdout


@pytest.mark.parametrize("deps", [["-MD"], ["-MMD"], ["-MD", "-MF", "custom.d"],
                                  ["-MD", "-MP", "-MT", "target"]], ids=" ".join)
def test_probe_dependency_files_match_clang(probe, tmp_path, deps):
    results = []
    for cc in ("clang-22", "enzyme-cc"):
        d = tmp_path / cc
        d.mkdir()
        shutil.copy(probe / "hello.c", d)
        run([cc, "-c", *deps, "hello.c", "-o", "hello.o"], cwd=d)     # compile
        run([cc, *deps, "hello.c", "-o", "prog"], cwd=d)              # compile and link
        results.append({p.name: p.read_text() for p in d.glob("*.d")})
    assert results[0] and results[0] == results[1]


def test_probe_assembly_output_matches_clang(probe, tmp_path):
    for cc in ("clang-22", "enzyme-cc"):
        run([cc, "-O2", "-S", str(probe / "hello.c"), "-o", str(tmp_path / f"{cc}.s")])
    assert (tmp_path / "clang-22.s").read_text() == (tmp_path / "enzyme-cc.s").read_text()


def test_probe_response_file(tmp_path):
    (tmp_path / "main.c").write_text(
        '#include <stdio.h>\ndouble sq(double x) { return x * x; }\n'
        'double __enzyme_autodiff(void *, double);\n'
        'int main(void) { printf("%g %g\\n", (double)VALUE, __enzyme_autodiff((void *)sq, 1.5)); }\n')
    (tmp_path / "args.rsp").write_text('-O2 "-DVALUE=5" main.c\n-o prog\n')
    run(["enzyme-cc", "@args.rsp"], cwd=tmp_path)
    assert run(["./prog"], cwd=tmp_path).stdout == "5 3\n"


@pytest.mark.parametrize("mode", [["-c", "bad.c"], ["bad.c", "-o", "bad"]], ids=["compile", "link"])
def test_probe_syntax_error_like_clang(probe, mode):
    e, c = both(mode, probe)
    assert c.returncode != 0
    assert (e.returncode, e.stdout, e.stderr) == (c.returncode, c.stdout, c.stderr)
    assert "bad.c:1:28: error: expected expression" in e.stderr


@pytest.mark.parametrize("flags", [["-O2", "-c"], ["-O0", "-c"], ["-O2", "-S"], ["-fsyntax-only"],
                                   ["-O2", "-c", "-x", "c++"]], ids=" ".join)
def test_probe_warning_flag_error_like_clang(probe, flags):
    """A flag probe (`-Werror -Wno-<unknown>`) fails as with clang: the attribute plugin's
    diagnostics client once dropped the errors reported before the compile, and exited 0."""
    args = ["-Werror", "-Wno-bogus-flag-zz", *flags, "hello.c"]
    if "-fsyntax-only" not in flags:
        args += ["-o", "probe.out"]
    e, c = both(args, probe)
    assert c.returncode == 1 and "unknown warning option" in c.stderr
    assert (e.returncode, e.stderr) == (c.returncode, c.stderr)
    assert not (probe / "probe.out").exists()


@pytest.mark.parametrize("args", [["-c", "hello.c", "missing.c"], ["missing.o"],
                                  ["-c", "hello.c", "hello.c", "-o", "two.o"]],
                         ids=["missing source", "missing object", "-o with two outputs"])
def test_probe_driver_errors_like_clang(probe, args):
    e, c = both(args, probe)
    assert c.returncode != 0
    assert (e.returncode, e.stderr) == (c.returncode, c.stderr)


# ---------------------------------------------------------------------------------------------
# The link step
# ---------------------------------------------------------------------------------------------

PLAIN = r"""
#include <math.h>
#include <stdio.h>
double f(double x) { return sin(x) * x; }
int main(void) { for (int i = 0; i < 3; i++) printf("%.12f\n", f(i * 0.5)); return 0; }
"""

AD_CORE = ("enzyme_cc.ad", "enzyme_cc.rules", "enzyme_cc.ir", "enzyme_cc.stdlib_rules")


def test_no_markers_links_as_clang_without_the_ad_core(tmp_path):
    (tmp_path / "plain.c").write_text(PLAIN)
    run(["enzyme-cc", "-O2", "-c", "plain.c", "-o", "plain.o"], cwd=tmp_path)
    # the link, in a Python that reports every module it imports
    r = run([sys.executable, "-X", "importtime", "-c",
             "import sys; from enzyme_cc.cli import _main; sys.exit(_main('clang', sys.argv[1:]))",
             "plain.o", "-lm", "-o", "via-enzyme"], cwd=tmp_path)
    imported = re.findall(r"\|\s+([\w.]+)\s*$", r.stderr, re.M)
    assert "enzyme_cc.lto.link" in imported
    assert not [m for m in imported if m.startswith(AD_CORE)]
    run(["clang-22", "plain.o", "-lm", "-o", "via-clang"], cwd=tmp_path)
    out = run(["./via-enzyme"], cwd=tmp_path).stdout
    assert out == run(["./via-clang"], cwd=tmp_path).stdout
    assert (tmp_path / "via-enzyme").read_bytes() == (tmp_path / "via-clang").read_bytes()
    # from source too: the same bytes as clang-22 -O2
    run(["clang-22", "-O2", "plain.c", "-lm", "-o", "from-source-clang"], cwd=tmp_path)
    run(["enzyme-cc", "-O2", "plain.c", "-lm", "-o", "from-source"], cwd=tmp_path)
    assert (tmp_path / "from-source").read_bytes() == (tmp_path / "from-source-clang").read_bytes()


KERNEL = "double poly(double x) { return x * x * x + 2 * x; }\n"
OTHER = "double unused_helper(double x) { return x - 1; }\n"
USER = r"""
#include <stdio.h>
double poly(double);
double __enzyme_autodiff(void *, double);
int main(void) { printf("%.6f %.6f\n", __enzyme_autodiff((void *)poly, 2.0), 3 * 4.0 + 2); }
"""


@pytest.fixture(scope="module")
def objs(tmp_path_factory):
    """Objects built once: poly.o (enzyme-cc), unused.o (gcc: no bitcode), main.o (enzyme-cc)."""
    d = tmp_path_factory.mktemp("objs")
    (d / "poly.c").write_text(KERNEL)
    (d / "unused.c").write_text(OTHER)
    (d / "main.c").write_text(USER)
    run(["enzyme-cc", "-O2", "-c", "poly.c", "main.c"], cwd=d)
    run(["gcc", "-O2", "-c", "unused.c"], cwd=d)
    run(["gcc", "-O2", "-c", "poly.c", "-o", "gcc-poly.o"], cwd=d)
    return d


ARCHIVERS = {
    "gnu-ar": ["ar", "rcs"],
    "gnu-ar-thin": ["ar", "rcsT"],
    "llvm-ar": ["llvm-ar-22", "rcs"],
    "llvm-ar-thin": ["llvm-ar-22", "rcs", "--thin"],
}


@pytest.mark.parametrize("archiver", ARCHIVERS)
def test_archive_with_bitcode_objects(objs, tmp_path, archiver):
    """A static library of enzyme-cc objects (and a gcc object the link does not need)."""
    lib = tmp_path / "lib"
    lib.mkdir()
    for o in ("poly.o", "unused.o"):
        shutil.copy(objs / o, lib)
    run([*ARCHIVERS[archiver], "libk.a", "poly.o", "unused.o"], cwd=lib)
    magic = (lib / "libk.a").read_bytes()[:8]
    assert magic == (b"!<thin>\n" if archiver.endswith("thin") else b"!<arch>\n")
    run(["enzyme-cc", "-O2", str(objs / "main.o"), "-Llib", "-lk", "-o", "prog"], cwd=tmp_path)
    assert run(["./prog"], cwd=tmp_path).stdout == "14.000000 14.000000\n"


SCRIPT_MAIN = r"""#include <stdio.h>
double energy(const double *x, int n);
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
int main(void) {
  double x[2] = {0.5, 1.5}, dx[2] = {0};
  __enzyme_autodiff((void *)energy, enzyme_dup, x, dx, enzyme_const, 2);
  printf("%.12f %.12f\n", dx[0], dx[1]);
  return 0;
}
"""


@pytest.mark.parametrize("lib", ["-lsim", "-lwrap", "libsim.a"])
def test_linker_script_naming_archives(tmp_path, lib):
    """A library that is a linker script, `GROUP ( libenergy.a libphys.a )` (or INPUT(-lsim)
    naming one): the archives it names are read for bitcode as the linker reads them (the
    script went to the linker unread, and energy had no definition to differentiate)."""
    import math
    (tmp_path / "m.c").write_text(SCRIPT_MAIN)
    (tmp_path / "a.c").write_text("#include <math.h>\ndouble phys(double x) { return sin(x) * x; }\n")
    (tmp_path / "b.c").write_text("double phys(double x);\ndouble energy(const double *x, int n) "
                                  "{ double s = 0; for (int i = 0; i < n; i++) "
                                  "s += phys(x[i]) * (i + 1); return s; }\n")
    for src, archive in (("a", "libphys.a"), ("b", "libenergy.a")):
        run(["enzyme-cc", "-O2", "-c", f"{src}.c"], cwd=tmp_path)
        run(["ar", "rcs", archive, f"{src}.o"], cwd=tmp_path)
    (tmp_path / "libsim.a").write_text("/* archives */ GROUP ( libenergy.a libphys.a )\n")
    (tmp_path / "libwrap.so").write_text("INPUT ( -lsim )\n")
    run(["enzyme-cc", "-O2", "m.c", "-L.", lib, "-lm", "-o", "prog"], cwd=tmp_path)
    got = [float(v) for v in run(["./prog"], cwd=tmp_path).stdout.split()]
    want = [d * (math.cos(x) * x + math.sin(x)) for d, x in ((1, 0.5), (2, 1.5))]
    assert got == pytest.approx(want, rel=1e-12)


WHOLE_MAIN = r"""
#include <stdio.h>
double __enzyme_autodiff(void *, double);
double sq(double);
double registered(void);
int main(void) { printf("%g %g\n", __enzyme_autodiff((void *)sq, 3.0), registered()); }
"""


@pytest.mark.parametrize("form", [["-Wl,--whole-archive", "libsq.a", "-Wl,--no-whole-archive"],
                                  ["-Wl,--whole-archive", "-L.", "-lsq", "-Wl,--no-whole-archive"],
                                  ["-Xlinker", "--whole-archive", "libsq.a", "-Xlinker",
                                   "--no-whole-archive"]], ids=" ".join)
def test_whole_archive(tmp_path, form):
    """--whole-archive takes every member: the one whose bitcode the AD object holds is not
    linked again (it gave duplicate definitions), the others (a gcc-style object without
    bitcode) still are."""
    (tmp_path / "main.c").write_text(WHOLE_MAIN)
    (tmp_path / "sq.c").write_text("double sq(double x) { return x * x; }\n")
    (tmp_path / "reg.c").write_text("double registered(void) { return 7; }\n")
    run(["enzyme-cc", "-O2", "-c", "sq.c"], cwd=tmp_path)
    run(["clang-22", "-O2", "-c", "reg.c"], cwd=tmp_path)
    run(["ar", "rcs", "libsq.a", "sq.o", "reg.o"], cwd=tmp_path)
    run(["enzyme-cc", "-O2", "main.c", *form, "-o", "prog"], cwd=tmp_path)
    assert run(["./prog"], cwd=tmp_path).stdout == "6 7\n"


WRAP_MAIN = r"""#include <stdio.h>
double g(double x);
double f(double x) { return g(x) + x; }
double __enzyme_autodiff(void *, double);
int main(void) { printf("%g %g\n", f(3.0), __enzyme_autodiff((void *)f, 3.0)); return 0; }
"""


ASAN_OVERFLOW = r"""
#include <stdio.h>
#include <stdlib.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
__attribute__((noinline)) double energy(const double *x, int n) {
  double e = 0;
  for (int i = 0; i <= n; i++) e += x[i] * x[i];     /* reads x[n]: one past the block */
  return e;
}
int main(int argc, char **argv) {
  int n = 8;
  double *x = malloc(n * sizeof(double)), *g = calloc(n, sizeof(double));
  for (int i = 0; i < n; i++) x[i] = 0.1 * i;
  if (argc > 1) __enzyme_autodiff((void *)energy, enzyme_dup, x, g, enzyme_const, n);
  else printf("e=%g\n", energy(x, n));
  printf("g[1]=%g\n", g[1]);
  free(x);
  free(g);
  return 0;
}
"""


def test_address_sanitizer_checks_the_differentiated_code(tmp_path):
    """-fsanitize=address instruments what the link step compiles (the functions the marker
    reaches, their derivatives, the marker's caller): the embedded bitcode is not instrumented
    yet, and the AD module went through no sanitizer pass (a heap overflow read garbage
    unreported; found by a new-user check)."""
    (tmp_path / "oob.c").write_text(ASAN_OVERFLOW)
    run(["enzyme-cc", "-O1", "-g", "-fsanitize=address", "oob.c", "-o", "oob"], cwd=tmp_path)
    for args in ([], ["grad"]):
        r = run(["./oob", *args], cwd=tmp_path, check=False)
        assert r.returncode != 0 and "AddressSanitizer: heap-buffer-overflow" in r.stderr, \
            (args, r.stdout, r.stderr)
        # (the derivative, inlined into main, reports the marker's line)
        assert ("oob.c:8" if not args else "oob.c:15") in r.stderr, r.stderr


SANITIZED_O0 = r"""#include <stdio.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
double f(const double *x, int n) { double s = 0; for (int i = 0; i < n; i++) s += x[i] * x[i]; return s; }
int main(void) {
  double x[2] = {1, 2}, dx[2] = {0, 0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, 2);
  printf("%g %g\n", dx[0], dx[1]);
  return 0;
}
"""


@pytest.mark.parametrize("sanitizer", ["address", "thread"])
def test_sanitizer_at_o0_with_activity_tags(tmp_path, sanitizer):
    """-O0 with -fsanitize=address or thread: the instrumented, dead loads of `enzyme_dup` and
    `enzyme_const` (declared extern only) stayed in the AD object: "undefined reference to
    `enzyme_dup'" (found by a new-user check). The tags are now defined weak."""
    (tmp_path / "s.c").write_text(SANITIZED_O0)
    run(["enzyme-cc", "-O0", f"-fsanitize={sanitizer}", "s.c", "-o", "s"], cwd=tmp_path)
    assert run(["./s"], cwd=tmp_path).stdout.split() == ["2", "4"]


COVERAGE_KERNEL = """#include <math.h>
double f(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++)
    if (x[i] > 0) s += sin(x[i]);
    else s -= x[i] * x[i];
  return s;
}
double unused(double x) { return x; }
"""
COVERAGE_MAIN = """#include <stdio.h>
double f(const double *x, int n);
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
int main(void) {
  double x[3] = {1, -2, 3}, dx[3] = {0};
  printf("%.12g\\n", f(x, 3));
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, 3);
  printf("%.12g %.12g %.12g\\n", dx[0], dx[1], dx[2]);
  return 0;
}
"""


@pytest.mark.parametrize("cache", ["0", pytest.param("1", marks=pytest.mark.slow)])
def test_coverage_counts_the_code_the_link_step_compiles(tmp_path, cache):
    """--coverage: the modules the link step recompiles (the marker's caller and what it
    reaches) counted nothing, their .gcda never written (found by a new-user check). Their
    counters are now put in at the link, with the .gcno the compile step wrote still valid
    (also when the AD object comes from the cache); f runs twice per gradient's call site
    (the primal call and the gradient's forward sweep), as under Enzyme."""
    import math
    (tmp_path / "k.c").write_text(COVERAGE_KERNEL)
    (tmp_path / "m.c").write_text(COVERAGE_MAIN)
    env = dict(os.environ, ENZYME_CC_CACHE=cache, ENZYME_CC_CACHE_DIR=str(tmp_path / "cache"))
    for src in ("k", "m"):
        run(["enzyme-cc", "-O2", "--coverage", "-c", f"{src}.c", "-o", f"{src}.o"],
            cwd=tmp_path, env=env)
    for attempt in range(2 if cache == "1" else 1):     # (the second link: a cache hit)
        for gcda in tmp_path.glob("*.gcda"):
            gcda.unlink()
        run(["enzyme-cc", "--coverage", "k.o", "m.o", "-lm", "-o", "p"], cwd=tmp_path, env=env)
        out = run(["./p"], cwd=tmp_path).stdout.split()
        assert [float(v) for v in out[1:]] == pytest.approx([math.cos(1), 4, math.cos(3)],
                                                            rel=1e-12)
        r = run(["llvm-cov-22", "gcov", "k.gcda", "m.gcda"], cwd=tmp_path)
        assert "Invalid" not in r.stdout + r.stderr, r.stdout + r.stderr
        lines = (tmp_path / "k.c.gcov").read_text()
        # f entered twice, its loop's test run 4 times a call (as clang's own build counts)
        assert re.search(r"^ +2: +2:double f", lines, re.M), lines
        assert re.search(r"^ +8: +4: +for", lines, re.M), lines
        assert re.search(r"^ +#####: +9:double unused", lines, re.M), lines
        main = (tmp_path / "m.c.gcov").read_text()
        assert re.search(r"^ +1: +8: +__enzyme_autodiff", main, re.M), main


@pytest.mark.parametrize("form", [["-Wl,--wrap=g"], ["-Wl,-wrap,g"],
                                  ["-Xlinker", "--wrap", "-Xlinker", "g"], ["-Wl,@link.rsp"]],
                         ids=" ".join)
def test_linker_wrap(tmp_path, form):
    """--wrap=g sends the calls of g to __wrap_g and __real_g to g in the differentiated code
    as ld does (the merged bitcode ignored it: f = g + x with g(x) = x^2 gave f(3) = 12 and
    7 where the wrapper 10 g gives 93 and 61, silently); g's own file keeps its calls. Also
    from the linker's own response file (`-Wl,@link.rsp`, which ld reads itself)."""
    (tmp_path / "link.rsp").write_text("--wrap g\n")
    (tmp_path / "main.c").write_text(WRAP_MAIN)
    (tmp_path / "lib.c").write_text("double g(double x) { return x * x; }\n"
                                    "double g_twice(double x) { return 2 * g(x); }\n")
    (tmp_path / "wrap.c").write_text("double __real_g(double x);\n"
                                     "double __wrap_g(double x) { return 10 * __real_g(x); }\n")
    run(["enzyme-cc", "-O2", "-c", "lib.c"], cwd=tmp_path)
    run(["ar", "rcs", "libg.a", "lib.o"], cwd=tmp_path)
    run(["enzyme-cc", "-O2", "main.c", "wrap.c", "libg.a", *form, "-o", "prog"], cwd=tmp_path)
    assert run(["./prog"], cwd=tmp_path).stdout == "93 61\n"


@pytest.mark.parametrize("option,files,want", [
    (["-Wl,--defsym=g=g10"], ["lib10.c"], "93 61\n"),
    (["-Wl,--allow-multiple-definition"], ["lib10.c", "lib.c"], "93 61\n"),
    (["-Wl,-z,muldefs"], ["lib.c", "lib10.c"], "12 7\n")], ids=lambda v: " ".join(v)
    if isinstance(v, list) else "")
def test_linker_symbol_options(tmp_path, option, files, want):
    """--defsym=g=g10 makes g an alias of g10, --allow-multiple-definition (-z muldefs) keeps
    the first definition of g, in the differentiated bitcode as ld does for the objects (the
    link refused: "no derivative rule for call to 'g'", "symbol multiply defined")."""
    (tmp_path / "main.c").write_text(WRAP_MAIN)
    (tmp_path / "lib.c").write_text("double g(double x) { return x * x; }\n")
    (tmp_path / "lib10.c").write_text("double g10(double x) { return 10 * x * x; }\n" + (
        "double g(double x) { return 10 * x * x; }\n" if "defsym" not in option[0] else ""))
    run(["enzyme-cc", "-O2", "main.c", *files, *option, "-o", "prog"], cwd=tmp_path)
    assert run(["./prog"], cwd=tmp_path).stdout == want


@pytest.mark.parametrize("form", [["-Wl,-Bstatic", "-lsq", "-Wl,-Bdynamic"],
                                  ["-Xlinker", "-Bstatic", "-lsq", "-Xlinker", "-Bdynamic"]],
                         ids=" ".join)
def test_bstatic_library_beside_a_shared_one(tmp_path, form):
    """-Bstatic makes -lsq the static library although libsq.so is beside it, as for ld (the
    link step looked for the shared one and said 'sq' had no bitcode)."""
    (tmp_path / "main.c").write_text(WHOLE_MAIN.replace("registered()", "0.0"))
    (tmp_path / "sq.c").write_text("double sq(double x) { return x * x; }\n")
    run(["enzyme-cc", "-O2", "-fPIC", "-c", "sq.c"], cwd=tmp_path)
    run(["ar", "rcs", "libsq.a", "sq.o"], cwd=tmp_path)
    run(["enzyme-cc", "-shared", "sq.o", "-o", "libsq.so"], cwd=tmp_path)
    run(["enzyme-cc", "-O2", "main.c", "-L.", *form, "-o", "prog"], cwd=tmp_path)
    assert run(["./prog"], cwd=tmp_path).stdout == "6 0\n"


@pytest.mark.parametrize("lto", [["-flto"], ["-flto=thin"], ["-flto", "-ffat-lto-objects"]],
                         ids=" ".join)
def test_lto_objects(objs, tmp_path, lto):
    """-flto objects are bitcode (or carry .llvm.lto): the link step reads them as they are."""
    run(["enzyme-cc", "-O2", *lto, "-c", str(objs / "poly.c"), "-o", "poly.o"], cwd=tmp_path)
    run(["ar", "rcs", "libpoly.a", "poly.o"], cwd=tmp_path)
    run(["enzyme-cc", "-O2", str(objs / "main.o"), "-L.", "-lpoly", "-o", "prog"], cwd=tmp_path)
    assert run(["./prog"], cwd=tmp_path).stdout == "14.000000 14.000000\n"


def test_partial_link_keeps_bitcode_for_the_final_link(objs, tmp_path):
    """`-r` with the marker call but without the function: nothing to differentiate yet."""
    (tmp_path / "extra.c").write_text("double extra(double x) { return x; }\n")
    run(["enzyme-cc", "-O2", "-r", str(objs / "main.o"), "extra.c", "-o", "part.o"], cwd=tmp_path)
    run(["enzyme-cc", "part.o", str(objs / "poly.o"), "-o", "prog"], cwd=tmp_path)
    assert run(["./prog"], cwd=tmp_path).stdout == "14.000000 14.000000\n"


def test_output_to_dev_null(probe):
    """Configure scripts compile to /dev/null: nothing to post-process there."""
    for wrapper, src in (("enzyme-cc", "hello.c"), ("enzyme-fc", "probe.f90")):
        (probe / "probe.f90").write_text("program p\nprint *, 1\nend program\n")
        r = run([wrapper, "-c", src, "-o", os.devnull], cwd=probe, check=False)
        assert r.returncode == 0 and r.stderr == "", r.stderr


GRAD_LIB = r"""
#include <math.h>
double __enzyme_autodiff(void *, double);
static double f(double x) { return exp(x) * sin(x); }
double df(double x) { return __enzyme_autodiff((void *)f, x); }
"""
GRAD_USER = r"""
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
double df(double);
int main(void) {
  double x = 0.7;
  void *h = dlopen("./libgrad.so", RTLD_NOW);
  double (*g)(double) = h ? (double (*)(double))dlsym(h, "df") : 0;
  printf("%.12f %.12f %.12f\n", df(x), g ? g(x) : NAN, exp(x) * (sin(x) + cos(x)));
  return 0;
}
"""


def test_shared_library_with_gradient(tmp_path):
    (tmp_path / "grad.c").write_text(GRAD_LIB)
    (tmp_path / "user.c").write_text(GRAD_USER)
    run(["enzyme-cc", "-O2", "-fPIC", "-shared", "grad.c", "-lm", "-o", "libgrad.so"], cwd=tmp_path)
    # the library's users need no enzyme-cc: plain clang links it, dlopen loads it
    run(["clang-22", "user.c", "-L.", "-lgrad", "-lm", "-ldl", "-Wl,-rpath,$ORIGIN", "-o", "user"],
        cwd=tmp_path)
    linked, opened, exact = map(float, run(["./user"], cwd=tmp_path).stdout.split())
    assert linked == pytest.approx(exact, rel=1e-12) and opened == pytest.approx(exact, rel=1e-12)


O0_PROGRAM = r"""
#include <math.h>
#include <stdio.h>
int enzyme_const;
double __enzyme_autodiff(void *, ...);
double f(double x, double y) {
  double s = 0;
  for (int i = 1; i <= 3; i++) s += pow(x, i) * y;
  return s;
}
int main(void) {
  double x = 1.5, y = 2.0;
  printf("%.10f exact %.10f\n", __enzyme_autodiff((void *)f, x, enzyme_const, y),
         (1 + 2 * x + 3 * x * x) * y);
  return 0;
}
"""


@pytest.mark.parametrize("flags", [["-O0"], ["-O2"], ["-g", "-O2"], ["-g", "-O0"]], ids=" ".join)
def test_optimization_levels_and_debug_info(tmp_path, flags):
    (tmp_path / "p.c").write_text(O0_PROGRAM)
    r = run(["enzyme-cc", *flags, "p.c", "-lm", "-o", "p"], cwd=tmp_path)
    assert r.stderr == ""
    check_pairs(run(["./p"], cwd=tmp_path).stdout, 1)


def test_function_from_gcc_object_is_an_error_naming_it(objs, tmp_path):
    r = run(["enzyme-cc", "-O2", str(objs / "main.o"), str(objs / "gcc-poly.o"), "-o", "prog"],
            cwd=tmp_path, check=False)
    assert r.returncode == 1
    no_traceback(r)
    err = r.stderr
    assert err.startswith("enzyme-cc: error: ") and err.count("\n") == 1, err
    assert "'poly'" in err and "gcc-poly.o" in err and "rebuild" in err and "enzyme-cc" in err
    assert not (tmp_path / "prog").exists()
    # the same from a static library member
    shutil.copy(objs / "gcc-poly.o", tmp_path)
    run(["ar", "rcs", "libgp.a", "gcc-poly.o"], cwd=tmp_path)
    r = run(["enzyme-cc", str(objs / "main.o"), "-L.", "-lgp", "-o", "prog"], cwd=tmp_path,
            check=False)
    assert r.returncode == 1 and "libgp.a(gcc-poly.o)" in r.stderr, r.stderr


@pytest.mark.parametrize("how", ["env", "path"])
def test_missing_clang_is_a_clear_error(probe, how):
    if how == "env":
        env = dict(os.environ, ENZYME_CC_CLANG="/nonexistent/clang-22")
        missing = "/nonexistent/clang-22"
    else:   # a PATH with the wrappers but no LLVM 22
        env = dict(os.environ, PATH=BIN)
        missing = "clang-22"
    env.pop("ENZYME_CC_DEBUG", None)
    for args in (["-c", "hello.c", "-o", "nowhere.o"], ["hello.c", "-o", "nowhere"], ["--version"]):
        r = run([os.path.join(BIN, "enzyme-cc"), *args], cwd=probe, env=env, check=False)
        assert r.returncode != 0
        assert r.stderr.startswith(f"enzyme-cc: error: cannot find '{missing}'"), r.stderr
        assert "apt-get install clang-22" in r.stderr
        no_traceback(r)


def test_corrupt_input_without_markers_is_the_linkers_business(probe, tmp_path):
    """No marker call anywhere: the link is clang's, and so is the diagnosis."""
    (tmp_path / "garbage.o").write_bytes(b"this is not an object file\n")
    args = [str(probe / "hello.c"), "garbage.o", "-o", "prog"]
    e = run(["enzyme-cc", *args], cwd=tmp_path, check=False)
    c = run(["clang-22", *args], cwd=tmp_path, check=False)
    assert e.returncode == c.returncode == 1
    assert "garbage.o: file format not recognized" in e.stderr


def test_corrupt_inputs_are_errors_naming_the_file(objs, tmp_path):
    (tmp_path / "garbage.o").write_bytes(b"this is not an object file\n")
    (tmp_path / "libbroken.a").write_bytes(b"!<arch>\nnot a member header at all\n")
    (tmp_path / "truncated.o").write_bytes((objs / "poly.o").read_bytes()[:200])
    main = str(objs / "main.o")
    cases = [([main, "garbage.o"], "garbage.o"), ([main, "-L.", "-lbroken"], "libbroken.a"),
             ([main, "truncated.o"], "truncated.o")]
    for args, name in cases:
        r = run(["enzyme-cc", *args, "-o", "prog"], cwd=tmp_path, check=False)
        assert r.returncode == 1, r.stderr
        assert r.stderr.startswith("enzyme-cc: error: ") and name in r.stderr, r.stderr
        no_traceback(r)
