"""The merge stage's text passes (lto/text_passes.py), one by one, on small IR inputs: what each
rewrites, that it leaves the rest alone, and that its output is valid IR. (mark_unreached has
its own tests in test_preopt_scope.py.)"""
import subprocess

import llvmlite.binding as llvm
import pytest

from conftest import run
from enzyme_cc.lto import text_passes
from enzyme_cc.lto.inline_asm import rewrite as rewrite_asm
from enzyme_cc.lto.x86_intrinsics import rewrite as rewrite_intrinsics
from enzyme_cc.lto.vector_reductions import rewrite as rewrite_reductions
from enzyme_cc.toolchain import tool


def _ir(c_source: str, *flags: str) -> str:
    """clang-22's IR text of a C source."""
    r = subprocess.run([tool("clang"), "-x", "c", "-S", "-emit-llvm", *flags, "-", "-o", "-"],
                       input=c_source, capture_output=True, text=True, check=True)
    return r.stdout


def _valid(text: str) -> str:
    llvm.parse_assembly(text).verify()
    return text


def _define(text: str, name: str) -> str:
    return next(line for line in text.split("\n") if line.startswith("define ")
                and f"@{name}(" in line)


def test_merge_passes_in_order():
    names = [n for n, _ in text_passes.merge_passes(shared=False, preopt=True,
                                                     name_values=lambda t: t, outside=set())]
    assert names == ["strip optnone", "name numbered types", "Enzyme's entry points unmangled",
                     "marker calls never merged", "keep registered calls", "keep BLAS calls",
                     "inline assembly as IR", "x86 intrinsics as IR",
                     "vector reductions as scalar code", "flang's OpenMP if clause as a fork",
                     "flang's OpenMP capture records unpacked",
                     "calls matched to their callee's one-element aggregates",
                     "internalize inline functions", "internalize the program's variables",
                     "keep marked loops", "mark unreached code"]
    shared = [n for n, _ in text_passes.merge_passes(shared=True, preopt=False, outside=set())]
    assert "internalize inline functions" not in shared and "keep marked loops" not in shared
    assert "internalize the program's variables" not in shared
    exported = [n for n, _ in text_passes.merge_passes(shared=False, preopt=False)]
    assert "internalize the program's variables" not in exported     # (outside unknown)


def test_calls_matched_to_one_element_aggregates():
    """flang's `character(kind=c_char), value` dummy is `[1 x i8]`; a C caller passes an i8
    (and a one-field struct the other way): the call gets the definition's types."""
    text = _valid("""define double @scaled(double %x, [1 x i8] %m) {
  %c = extractvalue [1 x i8] %m, 0
  %f = sitofp i8 %c to double
  %r = fmul double %x, %f
  ret double %r
}
define i8 @first({ i8 } %m) {
  %c = extractvalue { i8 } %m, 0
  ret i8 %c
}
define double @wrap(double %x, i8 %m, [1 x i8] %w) {
  %a = tail call double @scaled(double noundef %x, i8 noundef signext %m), !dbg !3
  %b = call double @scaled(double %a, i8 68)
  %c = call i8 @first([1 x i8] %w)
  %d = call double (double, [1 x i8]) @scaled(double %a, [1 x i8] %w)
  %r = fadd double %b, %d
  ret double %r
}
!3 = !{}
""")
    out = _valid(text_passes.call_signatures.match_calls(text))
    assert "%ecc.callarg.1 = insertvalue [ 1 x i8 ] poison, i8 %m, 0" in out
    assert "@scaled ( double noundef %x , [ 1 x i8 ] %ecc.callarg.1 ) , !dbg !3" in out
    assert "insertvalue [ 1 x i8 ] poison, i8 68, 0" in out
    assert "call i8 @first([1 x i8] %w)" in out        # ([1 x i8] against { i8 }: left)
    assert "call double (double, [1 x i8]) @scaled(double %a, [1 x i8] %w)" in out
    plain = "define i32 @f(i32 %a) {\n  ret i32 %a\n}\n"
    assert text_passes.call_signatures.match_calls(plain) == plain


def test_strip_optnone():
    text = _ir("double f(double x) { return x * x; }\n"
               "__attribute__((noinline)) double g(double x) { return x + 1; }\n", "-O0")
    out = _valid(text_passes.strip_optnone(text))
    groups = [line for line in out.split("\n") if line.startswith("attributes #")]
    assert not any("optnone" in g for g in groups)
    assert text_passes.strip_optnone(out) == out
    # (at -O0 every function has optnone + noinline, and both go; a user's noinline alone stays)
    user = "define void @h() #0 {\n  ret void\n}\nattributes #0 = { noinline nounwind }\n"
    assert text_passes.strip_optnone(user) == user


def test_internalize_inline_functions():
    text = ("$f = comdat any\n"
            "define linkonce_odr hidden double @f(double %x) comdat {\n  ret double %x\n}\n"
            "define double @g(double %x) {\n  %r = call double @f(double %x)\n"
            "  ret double %r\n}\n")
    out = _valid(text_passes.internalize_inline_functions(text))
    assert _define(out, "f") == "define internal double @f(double %x) {"
    assert _define(out, "g") == "define double @g(double %x) {"


def test_internalize_variables():
    """The program's external pointer variables become internal, except what code without
    bitcode names, llvm.used or module assembly names, a named section's, a comdat's, Enzyme's
    and the implementation's; other variables stay external (globalopt would split an
    aggregate)."""
    text = ('module asm ".globl in_asm"\n'
            "$c = comdat any\n"
            "@work = dso_local global ptr null, align 8\n"
            "@hidden_one = hidden local_unnamed_addr global ptr null\n"
            "@table = dso_local constant ptr @work\n"
            "@number = dso_local global i32 0\n"
            "@record = dso_local global { ptr, i64 } zeroinitializer\n"
            "@used_by_native = dso_local global ptr null\n"
            "@in_asm = dso_local global ptr null\n"
            "@kept = dso_local global ptr null\n"
            '@in_section = dso_local global ptr null, section "registry"\n'
            "@c = dso_local global ptr null, comdat\n"
            "@enzyme_dup = dso_local global ptr null\n"
            "@__data_start_of_mine = dso_local global ptr null\n"
            "@already = internal global i32 0\n"
            "@weak_one = weak global i32 0\n"
            "@ext = external global i32\n"
            "@llvm.used = appending global [1 x ptr] [ptr @kept], section \"llvm.metadata\"\n"
            "define i32 @g() {\n  %a = load i32, ptr @ext\n  ret i32 %a\n}\n")
    out = _valid(text_passes.internalize_variables(text, {"used_by_native"}))
    lines = {line.split(" =")[0]: line for line in out.split("\n") if line.startswith("@")}
    assert lines["@work"] == "@work = internal global ptr null, align 8"
    assert lines["@hidden_one"] == "@hidden_one = internal local_unnamed_addr global ptr null"
    assert lines["@table"] == "@table = internal constant ptr @work"
    for name in ("number", "record", "used_by_native", "in_asm", "kept", "in_section", "c",
                 "enzyme_dup", "__data_start_of_mine"):
        assert lines["@" + name].startswith(f"@{name} = dso_local global"), lines["@" + name]
    assert lines["@weak_one"] == "@weak_one = weak global i32 0"
    assert lines["@ext"] == "@ext = external global i32"


def test_inline_assembly_max_becomes_compare_and_select():
    text = ("define <2 x double> @m(<2 x double> %a, <2 x double> %b) {\n"
            '  %r = tail call <2 x double> asm "maxpd $1, $0", "=x,x,0,~{dirflag},~{fpsr},'
            '~{flags}"(<2 x double> %a, <2 x double> %b)\n'
            "  ret <2 x double> %r\n}\n")
    out = _valid(rewrite_asm(text))
    assert ' asm "' not in out
    assert "fcmp ogt <2 x double> %b, %a" in out and "select <2 x i1>" in out
    # -ffast-math puts its flags on the call (Eigen's FMA asm under -mfma -ffast-math)
    fast = text.replace("tail call <2 x double> asm", "tail call fast <2 x double> asm")
    assert ' asm "' not in _valid(rewrite_asm(fast))


def test_x86_intrinsics_become_plain_ir():
    text = ("declare <2 x double> @llvm.x86.sse2.max.pd(<2 x double>, <2 x double>)\n"
            "define <2 x double> @m(<2 x double> %a, <2 x double> %b) {\n"
            "  %r = call <2 x double> @llvm.x86.sse2.max.pd(<2 x double> %a, <2 x double> %b)\n"
            "  ret <2 x double> %r\n}\n")
    out = _valid(rewrite_intrinsics(text))
    assert "call <2 x double> @llvm.x86" not in out
    assert "fcmp ogt <2 x double> %a, %b" in out
    # _mm_addsub_pd (Eigen's SSE3 quaternion product): lane 0 a - b, lane 1 a + b
    addsub = text.replace("sse2.max.pd", "sse3.addsub.pd")
    out = _valid(rewrite_intrinsics(addsub))
    assert "call <2 x double> @llvm.x86" not in out
    assert "%r = shufflevector <2 x double> %x86.sub.r, <2 x double> %x86.add.r, " \
        "<2 x i32> <i32 0, i32 3>" in out

    # AVX-512's floor and truncating conversion with every lane (Eigen's float exp, expm1)
    f16, i16 = "<16 x float>", "<16 x i32>"
    avx512 = (f"define {i16} @e({f16} %a) {{\n"
              f"  %f = call {f16} @llvm.x86.avx512.mask.rndscale.ps.512({f16} %a, i32 9, "
              f"{f16} zeroinitializer, i16 -1, i32 4)\n"
              f"  %i = call {i16} @llvm.x86.avx512.mask.cvttps2dq.512({f16} %f, {i16} "
              f"zeroinitializer, i16 -1, i32 4)\n  ret {i16} %i\n}}\n")
    out = _valid(rewrite_intrinsics(avx512))
    assert "@llvm.x86" not in out
    assert f"%f = call {f16} @llvm.floor.v16f32({f16} %a)" in out
    assert f"%i = fptosi {f16} %x86.rnd.i to {i16}" in out
    masked = avx512.replace("i16 -1, i32 4)\n  %i", "i16 %m, i32 4)\n  %i")
    assert "@llvm.x86.avx512.mask.rndscale" in rewrite_intrinsics(masked)  # (some lanes kept)

    # the scalar forms: lane 0 computed, the upper lanes a's (_mm_min_sd, _mm_rsqrt_ss)
    out = _valid(rewrite_intrinsics(text.replace("sse2.max.pd", "sse2.min.sd")))
    assert "fcmp olt double %x86.a0.r, %x86.b0.r" in out
    assert "%r = insertelement <2 x double> %a, double %x86.pick.r, i32 0" in out
    f4 = "<4 x float>"
    rsqrt = (f"declare {f4} @llvm.x86.sse.rsqrt.ss({f4})\n"
             f"define {f4} @q({f4} %a) {{\n"
             f"  %r = call {f4} @llvm.x86.sse.rsqrt.ss({f4} %a)\n  ret {f4} %r\n}}\n")
    out = _valid(rewrite_intrinsics(rsqrt))
    assert f"%x86.full.r = call {f4} @llvm.x86.sse.rsqrt.ps({f4} %x86.low.r)" in out
    # AVX-512's rsqrt14: the input as its own pass-through; a partial mask a select
    f16 = "<16 x float>"
    r14 = (f"declare {f16} @llvm.x86.avx512.rsqrt14.ps.512({f16}, {f16}, i16)\n"
           f"define {f16} @s({f16} %a, {f16} %b, i16 %m) {{\n"
           f"  %r = call {f16} @llvm.x86.avx512.rsqrt14.ps.512({f16} %a, {f16} zeroinitializer, "
           f"i16 -1)\n"
           f"  %q = call {f16} @llvm.x86.avx512.rsqrt14.ps.512({f16} %r, {f16} %b, i16 %m)\n"
           f"  ret {f16} %q\n}}\n")
    out14 = _valid(rewrite_intrinsics(r14))
    assert f"%r = call {f16} @llvm.x86.avx512.rsqrt14.ps.512({f16} %a, {f16} %a, i16 -1)" in out14
    assert f"%q = select <16 x i1> %x86.lanes.q, {f16} %x86.all.q, {f16} %b" in out14
    assert f"%r = shufflevector {f4} %x86.full.r, {f4} %a, <4 x i32> <i32 0, i32 5, i32 6, " \
        "i32 7>" in out


def test_vector_reductions_become_scalar_code():
    text = ("declare float @llvm.vector.reduce.fadd.v4f32(float, <4 x float>)\n"
            "declare double @llvm.vector.reduce.fmax.v2f64(<2 x double>)\n"
            "define float @s(<4 x float> %0) {\n"
            "  %2 = tail call reassoc nsz float @llvm.vector.reduce.fadd.v4f32(float -0.000000e+00,"
            " <4 x float> %0)\n  ret float %2\n}\n"
            "define double @m(<2 x double> %v) {\n"
            "  %r = call double @llvm.vector.reduce.fmax.v2f64(<2 x double> %v)\n"
            "  ret double %r\n}\n")
    out = _valid(rewrite_reductions(text))
    assert "call reassoc nsz float @llvm.vector" not in out and "call double @llvm.vector" not in out
    assert "%2 = fadd reassoc nsz float %ad.vred1.a2, %ad.vred1.l3" in out
    assert "%r = call double @llvm.maxnum.f64(double %ad.vred2.l0, double %ad.vred2.l1)" in out
    assert "declare double @llvm.maxnum.f64(double, double)" in out
    assert rewrite_reductions("define void @f() {\n  ret void\n}\n").count("define") == 1


def test_full_lto_objects_with_reductions(tmp_path):
    """Objects built with -flto carry LLVM's pre-link vectorized reductions (a max loop, a
    fast-math sum): they were refused ("no derivative rule for call to
    'llvm.vector.reduce.fmax.v4f32'")."""
    (tmp_path / "r.c").write_text(r"""
#include <stdio.h>
#include <math.h>
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
float vmax(const float *x, int n) { float m = -INFINITY; for (int i = 0; i < n; i++) m = fmaxf(m, x[i] * x[i]); return m; }
double ssq(const double *x, int n) { double s = 0; for (int i = 0; i < n; i++) s += x[i] * x[i]; return s; }
int main(void) {
  float x[32], dx[32] = {0}; double y[32], dy[32] = {0};
  for (int i = 0; i < 32; i++) { x[i] = sinf(0.7f * i); y[i] = cos(0.3 * i); }
  __enzyme_autodiff((void *)vmax, enzyme_dup, x, dx, enzyme_const, 32);
  __enzyme_autodiff((void *)ssq, enzyme_dup, y, dy, enzyme_const, 32);
  int k = 0; for (int i = 1; i < 32; i++) if (x[i] * x[i] > x[k] * x[k]) k = i;
  double e = fabs(dx[k] - 2 * x[k]);
  for (int i = 0; i < 32; i++) { e += i == k ? 0 : fabs(dx[i]); e += fabs(dy[i] - 2 * y[i]); }
  printf("error %g\n", e);
  return e > 1e-5;
}
""")
    for flags in (["-O2", "-flto"], ["-O3", "-ffast-math", "-flto"]):
        run(["enzyme-cc", *flags, "r.c", "-o", "r", "-lm"], cwd=tmp_path)
        assert "@llvm.vector.reduce" in (
            subprocess.run([tool("clang"), *flags, "-S", "-emit-llvm", "r.c", "-o", "-"],
                           cwd=tmp_path, capture_output=True, text=True).stdout)
        run([str(tmp_path / "r")], cwd=tmp_path)


def test_keep_registered_calls_marks_them_noinline():
    text = _ir("double f(double x) { return x * x; }\n"
               "double g(double x) { return f(x) + 1; }\n"
               "void *__enzyme_inactivefn[1] = {(void *)f};\n", "-O1")
    out = _valid(text_passes.keep_registered_calls(text))
    assert "noinline" in _define(out, "f") and "noinline" not in _define(out, "g")
    # after unnamed_addr, as LLVM's parser wants it (an internal error before)
    named = text.replace("define dso_local double @f(", "define dso_local double @f(", 1)
    line = _define(named, "f")
    named = named.replace(line, line.replace(") #", ") local_unnamed_addr #", 1), 1)
    assert "local_unnamed_addr noinline" in _define(
        _valid(text_passes.keep_registered_calls(named)), "f")


@pytest.mark.parametrize("marked", [True, False])
def test_keep_blas_calls(marked):
    """The program's own dgemm_ stays a call (its rule replaces it); other code is untouched.
    (Compiled from C its define has local_unnamed_addr, before which noinline made the module
    unparsable.)"""
    name = "dgemm_" if marked else "mine_"
    text = _ir(f"void {name}(const char *ta, const char *tb, const int *m, const int *n, "
               "const int *k, const double *alpha, const double *a, const int *lda, "
               "const double *b, const int *ldb, const double *beta, double *c, "
               "const int *ldc) { c[0] = alpha[0] * a[0] * b[0] + beta[0] * c[0]; }\n", "-O1")
    out = _valid(text_passes.blas.keep_calls(text))
    assert ("noinline" in _define(out, name)) == marked


def test_keep_marked_loops():
    """A loop holding a checkpoint marker gets llvm.loop.unroll.disable: still a loop after
    the pre-AD optimization, to be outlined."""
    text = _ir("void __enzyme_set_checkpointing(int);\n"
               "double f(const double *x) { double s = 0;\n"
               "  for (int i = 0; i < 4; i++) { __enzyme_set_checkpointing(2); s += x[i] * s; }\n"
               "  return s; }\n", "-O1", "-fno-unroll-loops")
    out = _valid(text_passes.loop_checkpoint.keep_loops(text))
    assert out.count("llvm.loop.unroll.disable") > text.count("llvm.loop.unroll.disable")
    plain = _ir("double f(const double *x) { double s = 0;\n"
                "  for (int i = 0; i < 4; i++) s += x[i] * s; return s; }\n", "-O1")
    assert text_passes.loop_checkpoint.keep_loops(plain) == plain


def test_run_applies_each_pass_in_order():
    seen = []
    passes = [("a", lambda t: (seen.append("a"), t + "a")[1]),
              ("b", lambda t: (seen.append("b"), t + "b")[1])]
    assert text_passes.run("", passes) == "ab" and seen == ["a", "b"]


def test_name_numbered_types():
    """After instnamer (optimize.name_values) every `%N` is a numbered type: named, in uses and
    definitions, and not inside strings (a printf format holding "%0")."""
    from enzyme_cc.lto.optimize import name_values
    import tempfile
    text = ('%0 = type { %1, double }\n%1 = type { ptr }\n'
            '@fmt = private constant [4 x i8] c"%0d\\00"\n'
            'define double @f(ptr %0, i64 %1) {\n  %3 = alloca %0, align 8\n'
            '  %4 = getelementptr inbounds %0, ptr %3, i64 0, i32 1\n'
            '  store double 1.0, ptr %4\n  %5 = load double, ptr %4\n  ret double %5\n}\n')
    _valid(text)
    assert text_passes.NUMBERED_TYPE.search(text)
    with tempfile.TemporaryDirectory() as tmp:
        out = text_passes.name_numbered_types(text, lambda t: name_values(t, tmp))
        # a function instnamer skips (optnone) keeps numbered values: the module is left alone
        skipped = text.replace("define double @f(ptr %0, i64 %1) {",
                               "define double @f(ptr %0, i64 %1) #0 {") + \
            "attributes #0 = { noinline optnone }\n"
        assert text_passes.name_numbered_types(skipped, lambda t: name_values(t, tmp)) == skipped
    _valid(out)
    assert not text_passes.NUMBERED_TYPE.search(out)
    assert "%__enzyme_cc_type.0 = type { %__enzyme_cc_type.1, double }" in out
    assert "alloca %__enzyme_cc_type.0" in out and 'c"%0d\\00"' in out


def test_markers_nomerge():
    """The derivative markers' declarations (any signature, mangled or suffixed) get `nomerge`
    once; other declarations stay as they are."""
    text = ("declare void @__enzyme_autodiff(ptr, i32, ptr, ptr) local_unnamed_addr #4\n"
            "declare double @_Z17__enzyme_fwddiffPvz(ptr, ...)\n"
            "declare ptr @__enzyme_shadow(ptr, i32, i32)\n"
            "attributes #4 = { nounwind }\n")
    out = _valid(text_passes.markers_nomerge(text))
    assert "declare void @__enzyme_autodiff(ptr, i32, ptr, ptr) local_unnamed_addr #4 nomerge" in out
    assert "declare double @_Z17__enzyme_fwddiffPvz(ptr, ...) nomerge" in out
    assert "declare ptr @__enzyme_shadow(ptr, i32, i32)\n" in out
    assert text_passes.markers_nomerge(out) == out
    fork = "declare !callback !19 void @__kmpc_fork_call(ptr, i32, ptr, ...) local_unnamed_addr #4"
    assert fork + " nomerge" in text_passes.markers_nomerge(fork + "\n" + text)


@pytest.mark.parametrize("flags", [["-O2", "-flto"], ["-O2", "-flto=thin"], ["-O2"]])
def test_marker_calls_kept_apart_under_lto(tmp_path, flags):
    """Two marker calls in the arms of a branch, C++ invokes (a vector is live), that differ in
    their function and an activity marker: -flto's objects are IR optimized at the compile
    step, where SimplifyCFG merged them into one call with phis for both (an error: "too many
    arguments"); the compile step's plugin makes the markers nomerge (HPCG's driver)."""
    (tmp_path / "m.cpp").write_text("""#include <cstdio>
#include <vector>
extern int enzyme_dup, enzyme_const, enzyme_dupnoneed;
extern double __enzyme_autodiff(void *, ...);
struct V { int n; double *v; };
double f(V *x, V *y, int n) { double s = 0; for (int i = 0; i < n; i++) s += x->v[i] * x->v[i]; return s; }
double g(double *x, double *y, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) { y[i] = x[i] * x[i]; s += y[i] * x[i]; }
  return s;
}
int main(int argc, char **argv) {
  std::vector<double> xs = {3, 1}, dxs = {0, 0}, ys(2), dys(2);
  V x{2, xs.data()}, dx{2, dxs.data()}, y{2, ys.data()}, dy{2, dys.data()};
  if (argc == 2)
    __enzyme_autodiff((void *)g, enzyme_dup, x.v, dx.v, enzyme_dupnoneed, y.v, dy.v, enzyme_const, 2);
  else
    __enzyme_autodiff((void *)f, enzyme_dup, &x, &dx, enzyme_dup, &y, &dy, enzyme_const, 2);
  printf("%g\\n", dxs[0]);
  return 0;
}
""")
    run(["enzyme-c++", *flags, "-c", "m.cpp", "-o", "m.o"], cwd=tmp_path)
    run(["enzyme-c++", *flags, "m.o", "-o", "m"], cwd=tmp_path)
    assert run([str(tmp_path / "m")], cwd=tmp_path).stdout.split() == ["6"]          # 2 x0
    assert run([str(tmp_path / "m"), "g"], cwd=tmp_path).stdout.split() == ["27"]    # 3 x0^2


def test_unmangle_entry_points():
    """`void *__enzyme_shadow(void *, int, int);` in C++ without extern "C": its calls and
    declaration take the C name; a name declared twice (two signatures) or already used in C
    form, and other mangled names, stay."""
    text = ("declare ptr @_Z15__enzyme_shadowPvii(ptr, i32, i32)\n"
            "declare double @_Z17__enzyme_autodiffPvd(ptr, double)\n"
            "declare double @_Z17__enzyme_autodiffPvz(ptr, ...)\n"
            "declare void @_Z3fooPv(ptr)\n"
            "define ptr @g(ptr %p) {\n  %1 = call ptr @_Z15__enzyme_shadowPvii(ptr %p, i32 1, i32 0)\n"
            "  call void @_Z3fooPv(ptr %1)\n  ret ptr %1\n}\n")
    out = _valid(text_passes.unmangle_entry_points(text))
    assert "declare ptr @__enzyme_shadow(ptr, i32, i32)" in out
    assert "call ptr @__enzyme_shadow(ptr %p, i32 1, i32 0)" in out
    assert "@_Z17__enzyme_autodiffPvd(" in out and "@_Z17__enzyme_autodiffPvz(" in out
    assert "@_Z3fooPv(" in out
    both = text + "declare ptr @__enzyme_shadow(ptr, i32, i32)\n"
    assert text_passes.unmangle_entry_points(both) == both


FLANG_FORK = """
declare void @__kmpc_fork_call(ptr, i32, ptr, ...)
@loc = private constant [4 x i8] c"loc\\00"
define double @loss(ptr %x, ptr %tg, i32 %n) {
  %rec = alloca { ptr, ptr, ptr }, align 8
  %red = alloca double, align 8
  %nn = alloca i32, align 4
  store i32 %n, ptr %nn
  store ptr %red, ptr %rec, align 8
  %f1 = getelementptr inbounds nuw i8, ptr %rec, i64 8
  store ptr %x, ptr %f1, align 8
  %f2 = getelementptr inbounds nuw i8, ptr %rec, i64 16
  store ptr %tg, ptr %f2, align 8
  call void (ptr, i32, ptr, ...) @__kmpc_fork_call(ptr @loc, i32 1, ptr @loss..omp_par, ptr %rec)
  %r = load double, ptr %red
  ret double %r
}
define internal void @loss..omp_par(ptr %tid, ptr %zero, ptr readonly captures(none) %0) {
entry:
  %g1 = getelementptr i8, ptr %0, i64 8
  %1 = load ptr, ptr %g1, align 8
  %g2 = getelementptr i8, ptr %0, i64 16
  %2 = load ptr, ptr %g2, align 8
  %3 = load ptr, ptr %0, align 8
  %a = load double, ptr %1
  %b = load double, ptr %2
  %d = fsub double %a, %b
  store double %d, ptr %3
  ret void
}
"""


def test_flang_capture_record_unpacked():
    """flang's fork of a region with a record of the captured addresses becomes clang's: the
    addresses are the fork's arguments and the outlined function's parameters (where an
    enzyme_const one beside an active one was refused); the IR stays valid, numbered values in
    sequence; a record the function also hands elsewhere is left alone."""
    out = _valid(text_passes.flang_omp.unpack_capture_records(FLANG_FORK))
    assert "@__kmpc_fork_call(ptr @loc, i32 3, ptr @loss..omp_par, ptr %red, ptr %x, ptr %tg)" \
        in out, out
    assert "(ptr %tid, ptr %zero, ptr %0, ptr %ecc.omp.cap1, ptr %ecc.omp.cap2)" in out, out
    assert "%1 = getelementptr i8, ptr %ecc.omp.cap1, i64 0" in out and "alloca { ptr" not in out
    escaped = FLANG_FORK.replace("  %r = load double, ptr %red",
                                 "  call void @keep(ptr %rec)\n  %r = load double, ptr %red") + \
        "declare void @keep(ptr)\n"
    assert text_passes.flang_omp.unpack_capture_records(escaped) == escaped


BARRIER_IR = """
define <2 x double> @f(<2 x double> %x) {
  %p = alloca <2 x double>, align 16
  %a = {def_a}
  %r = fadd <2 x double> %a, splat (double {magic})
  store <2 x double> %r, ptr %p, align 16
  call void asm "", "=*imr|x,0,~{dirflag},~{fpsr},~{flags}"(ptr nonnull elementtype(<2 x double>) %p, <2 x double> %r)
  %l = load <2 x double>, ptr %p, align 16
  %s = fsub <2 x double> %l, splat (double {magic})
  ret <2 x double> %s
}
"""


@pytest.mark.parametrize("def_a,magic,kind", [
    ("call <2 x double> @llvm.fabs.v2f64(<2 x double> %x)", "0x4330000000000000", "rint"),
    ("fmul <2 x double> %x, %x", "0x4338000000000000", "rint"),     # 1.5 * 2^52: either sign
    ("fmul <2 x double> %x, %x", "0x4330000000000000", "kept"),     # 2^52 + a, a of any sign
    ("fmul <2 x double> %x, %x", "1.500000e+00", "value"),
])
def test_eigen_optimization_barrier(def_a, magic, kind):
    """Eigen's empty assembly barrier: the rounding it hides (a + 2^52 where a >= 0, or
    a + 1.5 * 2^52) becomes rint(a) + C, whose derivative is zero and whose value is the same;
    another rounding by addition keeps the assembly (refused where AD reaches it); any other
    value passes through. The rewritten module verifies and computes the same."""
    import struct
    from enzyme_cc.lto.inline_asm import barriers
    decl = "\ndeclare <2 x double> @llvm.fabs.v2f64(<2 x double>)\n"
    text = BARRIER_IR.replace("{def_a}", def_a).replace("{magic}", magic) + decl
    out = barriers(text)
    assert ("@llvm.rint.v2f64" in out) == (kind == "rint"), out
    assert ('asm ""' in out) == (kind == "kept"), out
    r = subprocess.run([tool("opt"), "-passes=verify", "-S", "-o", "/dev/null"], input=out,
                       text=True, capture_output=True)
    assert r.returncode == 0, r.stderr
    if kind == "rint":      # the same values: a + C == rint(a) + C in nearest-even mode
        c = struct.unpack("<d", int(magic, 16).to_bytes(8, "little"))[0]
        for a in (0.3, 2.5, 3.5, 1e6 + 0.5, 12345.678, 2.0 ** 53 + 2):
            a = abs(a) if "fabs" in def_a else a * a
            assert (a + c) - c == round(a) if a < 2 ** 52 else (a + c) - c, a
