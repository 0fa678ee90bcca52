"""scripts/enzyme_integration.py: how it reads Enzyme's RUN lines (the runner of Enzyme's
integration tests; the tests themselves are not in this repository)."""
import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "enzyme_integration.py"
spec = importlib.util.spec_from_file_location("enzyme_integration", SCRIPT)
runner = importlib.util.module_from_spec(spec)
spec.loader.exec_module(runner)

SEPARATE = ("%clang -std=c11 -O2 -DMODULE_CALLEE %s -S -emit-llvm -o %t.callee.ll %newLoadClangEnzyme "
            "-mllvm -enzyme-separate-compilation; %clang -std=c11 -O2 %s -S -emit-llvm -o - "
            "%newLoadClangEnzyme -mllvm -enzyme-separate-compilation | %lli "
            "--extra-module=%t.callee.ll -")


def test_separate_compilation_run_line():
    """Two modules of one file, the second linked into the run with --extra-module: the main
    build takes the flags of the compile piped into lli, the other module is built on its own."""
    assert runner.compile_flags(SEPARATE) == ["-std=c11"]
    assert runner.extra_modules(SEPARATE) == [["-std=c11", "-DMODULE_CALLEE"]]


def test_single_module_run_line():
    line = "%clang++ -O0 %s -S -emit-llvm -o - %loadClangEnzyme -ffast-math | %lli -"
    assert runner.compile_flags(line) == ["-x", "c++", "-ffast-math"]
    assert runner.extra_modules(line) == []


def test_separate_compilation_test_plan(tmp_path):
    src = tmp_path / "ReverseMode" / "sep.c"
    src.parent.mkdir()
    src.write_text(f"// RUN: {SEPARATE}\n#ifdef MODULE_CALLEE\nvoid g(void) {{}}\n#else\n"
                   "void g(void);\nint main() { g(); return 0; }\n#endif\n")
    t = runner.Test(str(tmp_path), str(src))
    assert t.kind == "run" and t.flags == ["-std=c11"]
    assert t.extra == [["-std=c11", "-DMODULE_CALLEE"]]


def test_objects_compiled_by_other_run_lines(tmp_path):
    """`%clang -c %s -o %t.main.o`, `... -DDEFINE_F -c %s -o %t.f.o`, then a RUN line linking the
    objects and running %t: one build per object, each with its compile's flags."""
    src = tmp_path / "ReverseMode" / "objs.c"
    src.parent.mkdir()
    src.write_text(
        "// RUN: %clang -std=c11 -O2 -flto=thin %loadClangEnzyme -c %s -o %t.main.o\n"
        "// RUN: %clang -std=c11 -O2 -flto=thin %loadClangEnzyme -DDEFINE_F -c %s -o %t.f.o\n"
        "// RUN: %clang -O2 -flto=thin %linkLLDEnzyme %t.main.o %t.f.o -o %t && %t | FileCheck %s\n"
        "// CHECK: 1\n#ifdef DEFINE_F\nint f(void) { return 1; }\n#else\nint f(void);\n"
        "int main() { return f() - 1; }\n#endif\n")
    t = runner.Test(str(tmp_path), str(src))
    assert t.kind == "run"
    assert t.flags == ["-std=c11", "-flto=thin"]
    assert t.extra == [["-std=c11", "-flto=thin", "-DDEFINE_F"]]


def test_compile_only_line_makes_an_object(tmp_path):
    """A compile-only RUN line with -c builds an object (enzyme-cc differentiates at the link,
    which that line never reaches)."""
    src = tmp_path / "ForwardMode" / "c.c"
    src.parent.mkdir()
    src.write_text("// RUN: %clang -std=c11 -O2 -flto %loadClangEnzyme -c %s -o /dev/null\n"
                   "extern double sq(double);\ndouble __enzyme_fwddiff(void *, double, double);\n"
                   "double d(double x) { return __enzyme_fwddiff((void *)sq, x, 1.0); }\n")
    t = runner.Test(str(tmp_path), str(src))
    assert t.kind == "compile" and t.object_only and t.flags == ["-std=c11", "-flto"]
