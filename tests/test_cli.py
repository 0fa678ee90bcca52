"""The command-line entry points: toolchain file, exit codes, error shape, tracebacks on request."""
import os

import pytest

from conftest import BIN, run
from enzyme_cc import cli

WRAPPERS = ("enzyme-cc", "enzyme-c++", "enzyme-fc")


def user_env(**extra):
    env = {k: v for k, v in os.environ.items() if k != "ENZYME_CC_DEBUG"}
    env.update(extra)
    return env


@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_print_toolchain_file(wrapper):
    r = run([wrapper, "--print-toolchain-file"])
    path = r.stdout.strip()
    assert r.returncode == 0 and r.stdout == path + "\n" and r.stderr == ""
    assert os.path.isabs(path) and os.path.isfile(path) and path.endswith(".cmake")
    with open(path) as f:
        assert "CMAKE_C_COMPILER" in f.read()


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    (d / "ok.c").write_text("int main(void) { return 0; }\n")
    (d / "exit3.c").write_text("int main(void) { return 3; }\n")
    (d / "bad.c").write_text("int main(void) { return }\n")
    (d / "undef.c").write_text("int missing_fn(void);\nint main(void) { return missing_fn(); }\n")
    (d / "variadic.c").write_text(
        "#include <stdarg.h>\ndouble sum(int n, ...) { return 0; }\n"
        "double __enzyme_autodiff(void *, ...);\n"
        "int main(void) { return (int)__enzyme_autodiff((void *)sum, 1, 2.0); }\n")
    (d / "grad.c").write_text(
        "double sq(double x) { return x * x; }\ndouble __enzyme_autodiff(void *, double);\n"
        "int main(void) { return (int)__enzyme_autodiff((void *)sq, 1.0); }\n")
    (d / "garbage.o").write_bytes(b"\x7fELF but not really")
    return d


@pytest.mark.parametrize("args, code", [
    (["-c", "ok.c", "-o", "ok.o"], 0),
    (["ok.c", "-o", "ok"], 0),
    (["-c", "bad.c"], 1),                   # clang's exit code for a diagnostic
    ([], 1),                                # clang: no input files
    (["-fno-such-flag", "-c", "ok.c"], 1),  # clang's unknown argument
])
def test_exit_codes_are_clangs(work, args, code):
    e = run(["enzyme-cc", *args], cwd=work, check=False, env=user_env())
    c = run(["clang-22", *args], cwd=work, check=False)
    assert e.returncode == c.returncode == code
    assert e.stderr == c.stderr


@pytest.mark.parametrize("wrapper, plain, source, flags", [
    ("enzyme-cc", "clang-22", "ok.c", ["-Ofast"]),
    ("enzyme-fc", "flang-new-22", "ok.f90", ["-Ofast"]),
    ("enzyme-fc", "flang-new-22", "ok.f90", ["-O2", "-fstack-arrays"]),
])
def test_compile_and_link_warns_as_the_plain_driver(work, wrapper, plain, source, flags):
    """A compile and link in one run warns as the plain driver does, once: the link of the
    objects compiled in the run warned again of compile flags (-fstack-arrays unused, -Ofast
    deprecated) and flang's IR compiled by clang a second time of -Ofast (new-user check D)."""
    (work / "ok.f90").write_text("program p\nend program\n")
    e = run([wrapper, *flags, source, "-o", "e"], cwd=work, env=user_env())
    c = run([plain, *flags, source, "-o", "c"], cwd=work)
    assert e.stderr.count("warning:") == c.stderr.count("warning:"), (e.stderr, c.stderr)


def test_link_failure_is_the_linkers(work):
    e = run(["enzyme-cc", "undef.c", "-o", "undef"], cwd=work, check=False, env=user_env())
    c = run(["clang-22", "undef.c", "-o", "undef"], cwd=work, check=False)
    assert e.returncode == c.returncode == 1
    # the same lines but for the name of the temporary object
    for text in (e.stderr, c.stderr):
        assert "undefined reference to `missing_fn'" in text
        assert text.endswith("clang-22: error: linker command failed with exit code 1 "
                             "(use -v to see invocation)\n")


def test_refused_link_leaves_no_output(work):
    """A link that AD refuses removes an output left by an earlier build, as a failed link of
    clang's does: `make && ./prog` ran the stale program (a new-user check)."""
    run(["enzyme-cc", "ok.c", "-o", "stale"], cwd=work)
    e = run(["enzyme-cc", "variadic.c", "-o", "stale"], cwd=work, check=False, env=user_env())
    assert e.returncode == 1 and "enzyme-cc: error:" in e.stderr, e.stderr
    assert not (work / "stale").exists()


def test_profile_instrumented_build(work):
    """-fprofile-instr-generate (and coverage mapping): the counters' intrinsics are lowered
    before code generation, where llc stopped with an internal error; the program runs and
    writes its profile, and llvm-profdata reads it."""
    (work / "prof.c").write_text(
        "double sq(double x) { return x * x; }\ndouble __enzyme_autodiff(void *, double);\n"
        "int main(void) { return (int)__enzyme_autodiff((void *)sq, 1.5) == 3 ? 0 : 1; }\n")
    run(["enzyme-cc", "-O2", "-fprofile-instr-generate", "-fcoverage-mapping", "prof.c",
         "-o", "prof"], cwd=work)
    env = dict(user_env(), LLVM_PROFILE_FILE=str(work / "prof.profraw"))
    assert run(["./prof"], cwd=work, check=False, env=env).returncode == 0
    run(["llvm-profdata-22", "merge", "-o", "prof.profdata", "prof.profraw"], cwd=work)


def test_program_exit_code_untouched(work):
    run(["enzyme-cc", "exit3.c", "-o", "exit3"], cwd=work)
    assert run(["./exit3"], cwd=work, check=False).returncode == 3


USER_ERRORS = [
    (["variadic.c", "-o", "v"], "variadic"),              # the AD core refuses, with a reason
    (["grad.c", "garbage.o", "-o", "g"], "garbage.o"),    # an input we cannot read
]


@pytest.mark.parametrize("args, word", USER_ERRORS, ids=["ad-error", "corrupt-input"])
def test_user_errors_have_no_traceback(work, args, word):
    r = run(["enzyme-cc", *args], cwd=work, check=False, env=user_env())
    assert r.returncode == 1
    assert r.stderr.startswith("enzyme-cc: error: ") and word in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and r.stderr.count("\n") == 1


@pytest.mark.parametrize("args, word", USER_ERRORS, ids=["ad-error", "corrupt-input"])
def test_debug_shows_the_traceback(work, args, word):
    r = run(["enzyme-cc", *args], cwd=work, check=False, env=user_env(ENZYME_CC_DEBUG="1"))
    assert r.returncode == 1
    assert "Traceback (most recent call last)" in r.stderr
    assert "enzyme-cc: error: " in r.stderr and word in r.stderr


def test_missing_tool_message_per_wrapper(work):
    for wrapper, var, tool in (("enzyme-c++", "ENZYME_CC_CLANGXX", "clang++"),
                               ("enzyme-fc", "ENZYME_CC_FLANG", "flang")):
        r = run([os.path.join(BIN, wrapper), "--version"], cwd=work, check=False,
                env=user_env(**{var: "/nonexistent/tool"}))
        assert r.returncode == 1
        assert r.stderr.startswith(f"{wrapper}: error: cannot find '/nonexistent/tool' ({tool}); ")


def test_compiler_killed_by_a_signal(tmp_path):
    """A tool killed by signal N gives 128+N, as a shell reports it (not Python's -N)."""
    fake = tmp_path / "clang-killed"
    fake.write_text("#!/bin/sh\nkill -KILL $$\n")
    fake.chmod(0o755)
    for args in (["--version"], ["-c", "x.c"]):
        (tmp_path / "x.c").write_text("int x;\n")
        r = run(["enzyme-cc", *args], cwd=tmp_path, check=False,
                env=user_env(ENZYME_CC_CLANG=str(fake)))
        assert r.returncode == 128 + 9


def test_internal_error_is_short_unless_debugging(monkeypatch, capsys):
    def boom(*a, **k):
        raise RuntimeError("simulated bug")
    monkeypatch.setattr(cli, "load_config", boom)
    monkeypatch.delenv("ENZYME_CC_DEBUG", raising=False)
    assert cli._main("clang", ["-c", "x.c"]) == 70
    err = capsys.readouterr().err
    assert err.startswith("enzyme-cc: error: internal error: RuntimeError: simulated bug")
    assert "ENZYME_CC_DEBUG=1" in err and "Traceback" not in err
    monkeypatch.setenv("ENZYME_CC_DEBUG", "1")
    with pytest.raises(RuntimeError, match="simulated bug"):
        cli._main("clang", ["-c", "x.c"])


BROKEN = """
define void @enzyme_cc_test_broken() {
entry:
  %a = add i32 1, 2
  %p = phi i32 [ 0, %entry ]
  ret void
}
"""


def test_invalid_derivative_ir_with_debug_info_is_reported(tmp_path, monkeypatch, capsys):
    """LLVM's parser aborts the process on a broken module that carries debug info; the link
    step must report the bug instead (the AD core is replaced by one that emits bad IR)."""
    import enzyme_cc.ad.synthesis.generate as generate

    monkeypatch.setattr(generate, "differentiate", lambda text, *args, **kw: text + BROKEN)
    monkeypatch.delenv("ENZYME_CC_DEBUG", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sq.c").write_text(
        "double sq(double x) { return x * x; }\ndouble __enzyme_autodiff(void *, double);\n"
        "int main(void) { return (int)__enzyme_autodiff((void *)sq, 1.0); }\n")
    assert cli._main("clang", ["-g", "-O2", "sq.c", "-o", "sq"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("enzyme-cc: error: internal error: the derivative IR does not verify")
    assert "PHI nodes not grouped" in err


def test_compile_step_leaves_no_temporary_files(tmp_path):
    """The IR files of the -O0 C compile (its second job) and of the Fortran compile live in a
    directory of their own, removed afterwards (an -O0 compile once left it behind)."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))
    (tmp_path / "a.c").write_text("double f(double x) { return x * x; }\n")
    (tmp_path / "b.f90").write_text("subroutine g(x)\n  real(8) :: x\n  x = x * 2\nend\n")
    run([os.path.join(BIN, "enzyme-cc"), "-O0", "-c", "a.c", "-o", "a.o"], cwd=tmp_path, env=env)
    run([os.path.join(BIN, "enzyme-fc"), "-O2", "-c", "b.f90", "-o", "b.o"], cwd=tmp_path, env=env)
    (tmp_path / "bad.c").write_text("int main(void) { return }\n")
    r = run([os.path.join(BIN, "enzyme-cc"), "-O0", "-c", "bad.c", "-o", "bad.o"], cwd=tmp_path,
            env=env, check=False)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert list(tmp.iterdir()) == []
