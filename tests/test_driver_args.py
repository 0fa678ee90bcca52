"""Classification of clang/flang command lines (enzyme_cc.driver_args)."""
import pytest

from enzyme_cc.driver_args import classify, tokenize_gnu
from enzyme_cc.errors import UserError


def srcs(inv):
    return [(s.index, s.path, s.lang) for s in inv.sources]


# (argv, action, sources as (index, path, lang), linker inputs as (index, path))
ACTIONS = [
    # compile
    ("-c a.c", "compile", [(1, "a.c", "c")], []),
    ("-c a.c b.cpp -o x.o", "compile", [(1, "a.c", "c"), (2, "b.cpp", "c++")], []),
    ("-O2 -Wall -c -DX=1 a.c", "compile", [(4, "a.c", "c")], []),
    ("-c -MD -MF dep.d a.c", "compile", [(4, "a.c", "c")], []),
    ("-c k.f90 m.F", "compile", [(1, "k.f90", "fortran"), (2, "m.F", "fortran")], []),
    ("-c x.s a.c", "compile", [(1, "x.s", "asm"), (2, "a.c", "c")], []),
    ("-x c -c -", "compile", [(3, "-", "c")], []),
    ("-c -x c foo.o", "compile", [(3, "foo.o", "c")], []),  # -x applies to any extension
    ("-c -x ir k.bc", "compile", [(3, "k.bc", "bc")], []),
    ("-c k.ll", "compile", [(1, "k.ll", "ir")], []),
    # link
    ("a.c", "link", [(0, "a.c", "c")], []),
    ("a.c b.o -o prog -lm", "link", [(0, "a.c", "c")], [(1, "b.o")]),
    ("a.o libk.a libz.so libq.so.1 k.bc x.lo noext -o p", "link", [],
     [(0, "a.o"), (1, "libk.a"), (2, "libz.so"), (3, "libq.so.1"), (4, "k.bc"), (5, "x.lo"),
      (6, "noext")]),
    ("-lm", "link", [], []),  # clang links with only -l inputs
    ("main.c x.s y.S", "link", [(0, "main.c", "c"), (1, "x.s", "asm"), (2, "y.S", "asm-cpp")], []),
    ("-x c++ a.x -x none b.o", "link", [(2, "a.x", "c++")], [(5, "b.o")]),
    ("-xc a.x b.y", "link", [(1, "a.x", "c"), (2, "b.y", "c")], []),
    ("-shared -fPIC a.c -o libk.so", "link", [(2, "a.c", "c")], []),
    ("p.f90 -o p", "link", [(0, "p.f90", "fortran")], []),
    ("-- -weird.c", "link", [(1, "-weird.c", "c")], []),  # after '--' everything is an input
    # passthrough: no object or link from sources
    ("-E a.c", "passthrough", [(1, "a.c", "c")], []),
    ("-S a.c -o a.s", "passthrough", [(1, "a.c", "c")], []),
    ("-M a.c", "passthrough", [(1, "a.c", "c")], []),
    ("-MM a.c", "passthrough", [(1, "a.c", "c")], []),
    ("-fsyntax-only a.c", "passthrough", [(1, "a.c", "c")], []),
    ("-c -emit-llvm a.c", "passthrough", [(2, "a.c", "c")], []),
    ("-### a.c -o p", "passthrough", [(1, "a.c", "c")], []),
    ("-E -x c -", "passthrough", [(3, "-", "c")], []),
    ("-c x.s", "passthrough", [(1, "x.s", "asm")], []),
    ("-c x.S y.s", "passthrough", [(1, "x.S", "asm-cpp"), (2, "y.s", "asm")], []),
    ("-c a.o", "passthrough", [], [(1, "a.o")]),
    ("-c -", "passthrough", [], [(1, "-")]),  # clang itself says -x is required
    ("-c a.h", "passthrough", [(1, "a.h", "c-header")], []),
    ("-x c++-header k.hpp -o k.pch", "passthrough", [(2, "k.hpp", "c++-header")], []),
    ("-O2 -Wall", "passthrough", [], []),  # no input files
    ("--version", "passthrough", [], []),
    ("-version", "passthrough", [], []),
    ("-dumpversion", "passthrough", [], []),
    ("-dumpmachine", "passthrough", [], []),
    ("--help", "passthrough", [], []),
    ("-v", "passthrough", [], []),
    ("-print-search-dirs", "passthrough", [], []),
    ("-print-prog-name=ld", "passthrough", [], []),
    ("-print-file-name=libc.so", "passthrough", [], []),
    ("-print-libgcc-file-name", "passthrough", [], []),
    ("--print-resource-dir", "passthrough", [], []),
    ("-print-target-triple a.o", "passthrough", [], [(1, "a.o")]),
]


@pytest.mark.parametrize("cmd,action,sources,inputs", ACTIONS, ids=[c[0] for c in ACTIONS])
def test_action_sources_inputs(cmd, action, sources, inputs):
    inv = classify(cmd.split())
    assert (inv.action, srcs(inv), inv.inputs) == (action, sources, inputs)


# Option values that look like files must never become inputs.
VALUES = [
    "-o foo.c", "-ofoo.c", "-MF x.o", "-MT a.c", "-MQ b.c", "-include a.h", "-imacros m.h",
    "-I dir.c", "-isystem s.c", "-iquote q.c", "-idirafter d.c", "-D a.c", "-U u.c",
    "-L lib.a", "-l k.so", "-Xlinker x.o", "-Xclang x.c", "-Xassembler x.s",
    "-Xpreprocessor p.c", "-mllvm x.o", "-target t.c", "-arch a.o", "-u sym.o", "-T script.o",
    "-z defs.o", "-e entry.o", "-isysroot r.c", "--sysroot r.c", "-F f.o", "-J mod.o",
    "-module-dir mod.o", "-gcc-toolchain g.c", "-resource-dir r.o", "-B b.o", "-A a.c",
    "-iprefix p.c", "-iwithprefix w.c", "-include-pch h.pch", "-x c",
]


@pytest.mark.parametrize("opt", VALUES)
def test_option_values_are_not_inputs(opt):
    inv = classify(opt.split() + ["-c", "main.c"])
    assert srcs(inv) == [(len(opt.split()) + 1, "main.c", "c")] and inv.inputs == []


@pytest.mark.parametrize("joined", ["--target=x86_64-linux-gnu", "--sysroot=/s", "-std=c99",
                                    "-fmodule-file=m.pcm", "-Wp,-MD,d.d", "-resource-dir=/r",
                                    "-isystem/x", "-MFd.d", "-includea.h"])
def test_joined_options_take_no_extra_token(joined):
    inv = classify([joined, "a.c", "-c"])
    assert srcs(inv) == [(1, "a.c", "c")]


LIBS = [
    ("a.o -lm -l z -L/opt/lib -L /usr/l2 -o p", [(1, "m"), (2, "z")], ["/opt/lib", "/usr/l2"]),
    ("-Lx -ly", [(1, "y")], ["x"]),
]


@pytest.mark.parametrize("cmd,libs,dirs", LIBS)
def test_libs_and_lib_dirs(cmd, libs, dirs):
    inv = classify(cmd.split())
    assert (inv.libs, inv.lib_dirs) == (libs, dirs)


@pytest.mark.parametrize("cmd,level", [
    ("-c a.c", "0"), ("-O2 -c a.c", "2"), ("-O3 -O1 -c a.c", "1"), ("-O -c a.c", "1"),
    ("-Os a.c", "s"), ("-Oz a.c", "z"), ("-O2 -Ofast a.c", "fast"), ("-Og a.c", "g"),
    ("-O4 a.c", "3"), ("-O3 -O0 a.c", "0"),
])
def test_opt_level_last_wins(cmd, level):
    assert classify(cmd.split()).opt_level == level


@pytest.mark.parametrize("cmd,output", [
    ("-c a.c", None), ("-c a.c -o a.o", "a.o"), ("-oprog a.c", "prog"), ("a.c -o x -o y", "y"),
])
def test_output(cmd, output):
    assert classify(cmd.split()).output == output


def test_flags():
    inv = classify("-v -shared -static a.c -o p".split())
    assert (inv.verbose, inv.shared, inv.static, inv.depfile_only) == (True, True, True, False)
    assert classify("-M a.c".split()).depfile_only and classify("-MM a.c".split()).depfile_only
    assert not classify("-MD -c a.c".split()).depfile_only
    assert classify("-x c a -x none b.o".split()).lang_override == [(0, "c"), (3, "none")]


def test_driver_does_not_change_classification():
    for driver in ("clang", "clang++", "flang"):
        inv = classify("k.f90 noext -o p".split(), driver)
        assert srcs(inv) == [(0, "k.f90", "fortran")] and inv.inputs == [(1, "noext")]
    with pytest.raises(ValueError):
        classify(["a.c"], "gcc")


# (argv, compile_args(), link_args_with({each source index: [SOURCE.o]}))
DERIVED = [
    ("-c a.c", [], ["a.o"]),
    ("-O2 -g -c a.c -o a.o", ["-O2", "-g"], ["-O2", "-g", "a.o", "-o", "a.o"]),
    ("-c -MD -MF dep.d -MT a.o -MP -MMD a.c -o a.o",
     ["-MD", "-MF", "dep.d", "-MT", "a.o", "-MP", "-MMD"], ["a.o", "-o", "a.o"]),
    ("-O2 a.c b.o -o p -L/x -L y -lm -l z -Wl,-rpath,/x -Xlinker --as-needed -fuse-ld=lld",
     ["-O2"],
     ["-O2", "a.o", "b.o", "-o", "p", "-L/x", "-L", "y", "-lm", "-l", "z", "-Wl,-rpath,/x",
      "-Xlinker", "--as-needed", "-fuse-ld=lld"]),
    ("-shared -fPIC -pthread k.c -o libk.so -static -rdynamic -pie -no-pie -nostdlib -s -u f "
     "-T l.ld -z now -Zfoo",
     ["-fPIC", "-pthread"],
     ["-shared", "-fPIC", "-pthread", "k.o", "-o", "libk.so", "-static", "-rdynamic", "-pie",
      "-no-pie", "-nostdlib", "-s", "-u", "f", "-T", "l.ld", "-z", "now", "-Zfoo"]),
    # -x kept by compile_args only in front of a source; -x none after sources dropped
    ("-x c a.x -x none b.o -v", ["-x", "c", "-v"], ["a.o", "b.o", "-v"]),
    ("-xc++ a.x -c", ["-xc++"], ["a.o"]),
    ("-x c -c -", ["-x", "c"], ["-.o"]),
    ("-I inc -include pre.h -DX -c a.c", ["-I", "inc", "-include", "pre.h", "-DX"],
     ["-I", "inc", "-include", "pre.h", "-DX", "a.o"]),
    ("-v main.c k.f90 -o p", ["-v"], ["-v", "main.o", "k.o", "-o", "p"]),
    ("a.c -- b.c", [], ["a.o", "--", "b.o"]),
    # a link-only clang/flang reports these unused: compile jobs only
    ("-Werror -mllvm -x86-asm-syntax=intel -Wa,--noexecstack a.c -o p",
     ["-Werror", "-mllvm", "-x86-asm-syntax=intel", "-Wa,--noexecstack"],
     ["-Werror", "a.o", "-o", "p"]),
    ("-J mods -module-dir m2 -Jm3 k.f90", ["-J", "mods", "-module-dir", "m2", "-Jm3"], ["k.o"]),
]


@pytest.mark.parametrize("cmd,compile_args,link_args", DERIVED, ids=[d[0] for d in DERIVED])
def test_compile_and_link_args(cmd, compile_args, link_args):
    inv = classify(cmd.split())
    assert inv.compile_args() == compile_args
    replace = {s.index: [s.path.rsplit(".", 1)[0] + ".o"] for s in inv.sources}
    assert inv.link_args_with(replace) == link_args


def test_link_args_replace_any_argument():
    inv = classify("a.c old.o -l m -o p".split())
    replaced = inv.link_args_with({0: ["/t/a.o"], 1: [], 2: ["-lnew"]})
    assert replaced == ["/t/a.o", "-lnew", "-o", "p"]
    assert inv.link_args_with({}) == ["old.o", "-l", "m", "-o", "p"]


def test_compile_args_for_one_source():
    inv = classify("-O1 -x c a.x -x c++ b.y -x none c.f90 -c".split())
    a, b, c = inv.sources
    assert (a.lang, b.lang, c.lang) == ("c", "c++", "fortran")
    assert inv.compile_args() == ["-O1", "-x", "c", "-x", "c++", "-x", "none"]
    assert inv.compile_args(a) == ["-O1", "-x", "c"]
    assert inv.compile_args(b) == ["-O1", "-x", "c++"]
    assert inv.compile_args(c) == ["-O1", "-x", "none"]


@pytest.mark.parametrize("text,tokens", [
    ("a b\n\tc", ["a", "b", "c"]),
    ('"a b" c\\ d', ["a b", "c d"]),
    ("'e\\\"f' 'g h'", ['e"f', "g h"]),
    ('x"y z"w ""', ["xy zw", ""]),
    ("-DS=\\'q\\'", ["-DS='q'"]),
])
def test_tokenize_gnu(text, tokens):
    assert tokenize_gnu(text) == tokens


def test_response_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "inner.rsp").write_text("-DINNER 'with space.c'\n")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "outer.rsp").write_text('-O2 "-DMSG=hello world" @inner.rsp\n-c\n')
    inv = classify(["@d/outer.rsp", "x.c", "@missing.rsp"])
    assert inv.args == ["-O2", "-DMSG=hello world", "-DINNER", "with space.c", "-c", "x.c",
                        "@missing.rsp"]
    assert inv.action == "compile"
    assert srcs(inv) == [(3, "with space.c", "c"), (5, "x.c", "c")]
    assert inv.compile_args() == ["-O2", "-DMSG=hello world", "-DINNER"]


def test_recursive_response_file_is_an_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.rsp").write_text("-c @b.rsp")
    (tmp_path / "b.rsp").write_text("@a.rsp")
    with pytest.raises(UserError, match="recursive"):
        classify(["@a.rsp", "x.c"])


@pytest.mark.parametrize("cmd,level", [
    # rustc's link with -C linker-plugin-lto gives its level only to the linker's LTO
    ("a.o -Wl,-plugin-opt=O3,-plugin-opt=mcpu=x86-64 -o p", "3"),
    ("a.o -Wl,-plugin-opt=O0 -o p", "0"),
    ("a.o -Wl,--lto-O2 -o p", "2"),
    ("-O1 a.o -Wl,-plugin-opt=O3 -o p", "1"),          # an -O of the link's own wins
    ("a.o -o p", "0"),
])
def test_link_level_from_the_linkers_lto_level(cmd, level):
    assert classify(cmd.split()).opt_level == level
