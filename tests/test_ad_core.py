"""The AD core on small hand-written IR: differentiate, JIT with llvmlite, compare to the exact value."""
import ctypes
import math

import llvmlite.binding as llvm
import pytest

from enzyme_cc.ad.synthesis.generate import differentiate
from enzyme_cc.errors import UserError

llvm.initialize_native_target()
llvm.initialize_native_asmprinter()

HEADER = """
target triple = "x86_64-pc-linux-gnu"
@enzyme_dup = external global i32
@enzyme_const = external global i32
@enzyme_out = external global i32
declare double @__enzyme_autodiff(ptr, ...)
declare double @llvm.sin.f64(double)
declare double @pow(double, double)
declare double @exp(double)
"""


def jit(text):
    mod = llvm.parse_assembly(text)
    mod.verify()
    tm = llvm.Target.from_default_triple().create_target_machine()
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    return engine


def run(body, entry, restype, *argtypes):
    text = differentiate(HEADER + body)
    engine = jit(text)
    fn = ctypes.CFUNCTYPE(restype, *argtypes)(engine.get_function_address(entry))
    fn.engine = engine
    return fn


def test_straight_line_and_intrinsics():
    body = """
define double @f(double %x) {
  %s = call double @llvm.sin.f64(double %x)
  %m = fmul double %s, %x
  %e = call double @exp(double %m)
  ret double %e
}
define double @test(double %x) {
  %d = call double (ptr, ...) @__enzyme_autodiff(ptr @f, double %x)
  ret double %d
}"""
    g = run(body, "test", ctypes.c_double, ctypes.c_double)
    x = 0.7
    exact = math.exp(math.sin(x) * x) * (math.cos(x) * x + math.sin(x))
    assert g(x) == pytest.approx(exact, rel=1e-12)


def test_branch_phi_figure5():
    body = """
define double @relu3(double %x) {
entry:
  %c = fcmp ogt double %x, 0.0
  br i1 %c, label %pos, label %end
pos:
  %p = call double @pow(double %x, double 3.0)
  br label %end
end:
  %r = phi double [ %p, %pos ], [ 0.0, %entry ]
  ret double %r
}
define double @test(double %x) {
  %d = call double (ptr, ...) @__enzyme_autodiff(ptr @relu3, double %x)
  ret double %d
}"""
    g = run(body, "test", ctypes.c_double, ctypes.c_double)
    assert g(2.0) == pytest.approx(12.0)
    assert g(-2.0) == 0.0


def test_loop_with_memory_and_tape():
    # f(x, n) = sum_i x[i] * x[i] * w  with a loop-carried accumulator and a data-dependent exit
    body = """
define double @f(ptr %x, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %acc = phi double [ 1.0, %entry ], [ %acc1, %loop ]
  %p = getelementptr inbounds double, ptr %x, i64 %i
  %v = load double, ptr %p
  %acc1 = fmul double %acc, %v
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  ret double %acc1
}
define void @test(ptr %x, ptr %dx, i64 %n) {
  %d = call double (ptr, ...) @__enzyme_autodiff(ptr @f, ptr %x, ptr %dx, i64 %n)
  ret void
}"""
    g = run(body, "test", None, ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double),
            ctypes.c_int64)
    xs = [1.5, -2.0, 0.5, 3.0]
    x = (ctypes.c_double * 4)(*xs)
    dx = (ctypes.c_double * 4)()
    g(x, dx, 4)
    prod = math.prod(xs)
    assert list(dx) == pytest.approx([prod / v for v in xs])


def test_unknown_function_is_an_error():
    body = """
declare double @mystery(double)
define double @f(double %x) {
  %y = call double @mystery(double %x)
  ret double %y
}
define double @test(double %x) {
  %d = call double (ptr, ...) @__enzyme_autodiff(ptr @f, double %x)
  ret double %d
}"""
    with pytest.raises(UserError, match=r"in function 'f'.*mystery.*hint"):
        differentiate(HEADER + body)


def test_marker_argument_errors():
    body = """
define double @f(double %x, double %y) {
  %m = fmul double %x, %y
  ret double %m
}
define double @test(double %x) {
  %d = call double (ptr, ...) @__enzyme_autodiff(ptr @f, double %x)
  ret double %d
}"""
    with pytest.raises(UserError, match="too few arguments"):
        differentiate(HEADER + body)


@pytest.fixture
def user_rules(tmp_path):
    from enzyme_cc.rules.registry import set_user_rule_files

    def use(text):
        path = tmp_path / "rules.toml"
        path.write_text(text)
        set_user_rule_files([str(path)])
    yield use
    set_user_rule_files([])


def test_rule_arity_mismatch_is_an_error(user_rules):
    user_rules('[mul]\nargs = ["x"]\npartials = ["2"]\n')
    body = """
declare double @mul(double, double)
define double @f(double %x) {
  %y = call double @mul(double %x, double %x)
  ret double %y
}
define double @test(double %x) {
  %d = call double (ptr, ...) @__enzyme_autodiff(ptr @f, double %x)
  ret double %d
}"""
    with pytest.raises(UserError, match="has 1 arguments but the call passes 2"):
        differentiate(HEADER + body)


def test_rule_with_float_argument_of_double_function(user_rules):
    user_rules('[twice]\nargs = ["x"]\npartials = ["2 * x"]\n')
    body = """
define double @twice(float %x) {
  %e = fpext float %x to double
  %y = fmul double %e, %e
  ret double %y
}
define double @f(double %x) {
  %t = fptrunc double %x to float
  %y = call double @twice(float %t)
  ret double %y
}
define double @test(double %x) {
  %d = call double (ptr, ...) @__enzyme_autodiff(ptr @f, double %x)
  ret double %d
}"""
    g = run(body, "test", ctypes.c_double, ctypes.c_double)
    assert g(1.5) == pytest.approx(3.0)


def test_integer_store_over_float_data_zeroes_its_derivative():
    """`store i64` over memory TBAA types as double (a bit pattern written over a double): the
    stored value carries no derivative, in reverse and in forward mode."""
    body = """
@enzyme_dup2 = external global i32
declare double @__enzyme_fwddiff(ptr, ...)
define double @f(ptr %x) {
  %a = load double, ptr %x, !tbaa !1
  %p = getelementptr inbounds double, ptr %x, i64 1
  store i64 4611686018427387904, ptr %p, !tbaa !1
  %b = load double, ptr %p, !tbaa !1
  %r = fmul double %a, %b
  %s = fmul double %r, %a
  ret double %s
}
define double @grad(ptr %x, ptr %dx) {
  %d = call double (ptr, ...) @__enzyme_autodiff(ptr @f, ptr %x, ptr %dx)
  ret double 0.0
}
define double @tan(ptr %x, ptr %tx) {
  %t = call double (ptr, ...) @__enzyme_fwddiff(ptr @f, ptr %x, ptr %tx)
  ret double %t
}
!1 = !{!2, !2, i64 0}
!2 = !{!"double", !3, i64 0}
!3 = !{!"omnipotent char", !4, i64 0}
!4 = !{!"Simple C/C++ TBAA"}"""
    text = differentiate(HEADER + body)
    engine = jit(text)
    arr = ctypes.c_double * 2
    grad = ctypes.CFUNCTYPE(ctypes.c_double, arr, arr)(engine.get_function_address("grad"))
    tan = ctypes.CFUNCTYPE(ctypes.c_double, arr, arr)(engine.get_function_address("tan"))
    x, dx = arr(1.5, 7.0), arr(0.0, 5.0)        # f = 2 * x0^2 (x[1] becomes 2.0)
    grad(x, dx)
    assert list(dx) == pytest.approx([6.0, 0.0])
    x, tx = arr(1.5, 7.0), arr(1.0, 3.0)
    assert tan(x, tx) == pytest.approx(6.0)
    assert tx[1] == 0.0


@pytest.mark.parametrize("freeze", ["freeze double %x", "freeze <2 x double> %v"])
def test_freeze_of_floats_passes_the_derivative_through(freeze):
    """`freeze` returns its operand (a defined one): its adjoint and its tangent are the
    operand's, for floats and float vectors (was "integer arithmetic on data that holds a
    float")."""
    body = f"""
declare double @__enzyme_fwddiff(ptr, ...)
define double @f(double %x) {{
  %v0 = insertelement <2 x double> poison, double %x, i64 0
  %v = insertelement <2 x double> %v0, double %x, i64 1
  %z = {freeze}
  %y = {"extractelement <2 x double> %z, i64 1" if "<2" in freeze else "fadd double %z, 0.0"}
  %s = fmul double %y, %x
  ret double %s
}}
define double @grad(double %x) {{
  %d = call double (ptr, ...) @__enzyme_autodiff(ptr @f, double %x)
  ret double %d
}}
define double @tan(double %x) {{
  %t = call double (ptr, ...) @__enzyme_fwddiff(ptr @f, double %x, double 1.0)
  ret double %t
}}"""
    engine = jit(differentiate(HEADER + body))
    for name in ("grad", "tan"):
        fn = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(engine.get_function_address(name))
        assert fn(1.25) == pytest.approx(2.5), name


def test_integer_select_and_freeze_of_float_bits():
    """A clamp LLVM does on the bits of doubles (`select i1 %c, i64 %lo, i64 %x` of i64 loads
    TBAA types as double, then an i64 store; a freeze of such bits): the adjoint goes to the
    chosen double, as a double (the select's adjoint was typed i64: invalid IR)."""
    body = """
define void @f(ptr %x, ptr %lo) {
  %a = load i64, ptr %x, !tbaa !1
  %l = load i64, ptr %lo, !tbaa !1
  %af = bitcast i64 %a to double
  %lf = bitcast i64 %l to double
  %c = fcmp olt double %af, %lf
  %s = select i1 %c, i64 %l, i64 %a
  %z = freeze i64 %s
  %p = getelementptr inbounds double, ptr %x, i64 1
  store i64 %z, ptr %p, !tbaa !1
  ret void
}
define double @grad(ptr %x, ptr %dx, ptr %lo, ptr %dlo) {
  call double (ptr, ...) @__enzyme_autodiff(ptr @f, ptr %x, ptr %dx, ptr %lo, ptr %dlo)
  ret double 0.0
}
!1 = !{!2, !2, i64 0}
!2 = !{!"double", !3, i64 0}
!3 = !{!"omnipotent char", !4, i64 0}
!4 = !{!"Simple C/C++ TBAA"}"""
    engine = jit(differentiate(HEADER + body))
    arr = ctypes.c_double * 2
    grad = ctypes.CFUNCTYPE(ctypes.c_double, arr, arr, arr, arr)(engine.get_function_address("grad"))
    for x0, chosen in ((0.5, "lo"), (2.0, "x")):    # x[1] = max(x[0], lo[0])
        x, dx, lo, dlo = arr(x0, 0.0), arr(0.0, 3.0), arr(1.0, 0.0), arr(0.0, 0.0)
        grad(x, dx, lo, dlo)
        assert (dx[0], dlo[0]) == ((0.0, 3.0) if chosen == "lo" else (3.0, 0.0))
        assert dx[1] == 0.0


def test_error_about_an_argument_names_it():
    """A refusal located at a function argument (a select joining a shadowed and a constant
    pointer argument) names the argument; building the message crashed before (a parameter
    has no metadata), hiding the refusal behind an internal error."""
    body = """
define void @f(ptr %a, ptr %b, i1 %c, double %x) {
  %p = select i1 %c, ptr %a, ptr %b
  %y = fmul double %x, %x
  store double %y, ptr %p
  ret void
}
define double @test(ptr %a, ptr %da, ptr %b, double %x) {
  %d = call double (ptr, ...) @__enzyme_autodiff(ptr @f, ptr @enzyme_dup, ptr %a, ptr %da, ptr @enzyme_const, ptr %b, i1 true, double %x)
  ret double %d
}"""
    with pytest.raises(UserError) as e:
        differentiate(HEADER + body)
    msg = str(e.value)
    assert "in function 'f', argument '%b'" in msg and "joins shadowed and unshadowed" in msg, msg


def test_integer_arguments_joined_by_a_select_hold_no_derivative():
    """Fortran passes INTEGER dimensions by reference; LAPACK's dtrsm selects between two of
    them (`NROWA = M` or `N`), one of which the caller gave a shadow. Integer memory holds no
    derivative, whatever pointers join it: no refusal ("joins shadowed and unshadowed memory;
    hint: mark the argument enzyme_dup", which cannot apply inside a library)."""
    body = """
define void @f(ptr %m, ptr %n, i1 %c, ptr %a) {
entry:
  %p = select i1 %c, ptr %m, ptr %n
  %k = load i32, ptr %p
  %k64 = sext i32 %k to i64
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %q = getelementptr inbounds double, ptr %a, i64 %i
  %x = load double, ptr %q
  %y = fmul double %x, %x
  store double %y, ptr %q
  %i1 = add i64 %i, 1
  %done = icmp sge i64 %i1, %k64
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
define double @test(ptr %m, ptr %dm, ptr %n, i1 %c, ptr %a, ptr %da) {
  %d = call double (ptr, ...) @__enzyme_autodiff(ptr @f, ptr @enzyme_dup, ptr %m, ptr %dm, ptr @enzyme_const, ptr %n, i1 %c, ptr @enzyme_dup, ptr %a, ptr %da)
  ret double 0.0
}"""
    engine = jit(differentiate(HEADER + body))
    arr, i32 = ctypes.c_double * 3, ctypes.c_int32
    test = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.POINTER(i32), ctypes.POINTER(i32),
                            ctypes.POINTER(i32), ctypes.c_bool, arr, arr)(
        engine.get_function_address("test"))
    for c, rows in ((True, 2), (False, 3)):
        m, dm, n = i32(2), i32(0), i32(3)
        a, da = arr(1.5, 2.0, 2.5), arr(1.0, 1.0, 1.0)
        test(ctypes.byref(m), ctypes.byref(dm), ctypes.byref(n), c, a, da)
        assert list(da) == pytest.approx([3.0, 4.0, 5.0][:rows] + [1.0] * (3 - rows))
        assert dm.value == 0


def test_sign_mask_with_undefined_lanes_and_poison_lanes():
    """AVX-512 code as LLVM leaves it (Eigen's 4x4 inverse with -march=native): a reciprocal in
    lane 0 of `fdiv <1.0, poison>`, its bits broadcast to 8 lanes and sign-flipped by a xor whose
    unread lanes are undef, then multiplied with a vector whose unread lanes are poison. The
    undefined mask lanes keep the value (no refusal), and the zero adjoints of the unread lanes
    do not meet poison: the derivative reaches b's lane 1 (it was lost)."""
    body = """
define double @f(ptr %p) {
  %a = load <2 x double>, ptr %p, align 8
  %q = getelementptr i8, ptr %p, i64 16
  %b = load <2 x double>, ptr %q, align 8
  %m = fmul <2 x double> %a, %b
  %w = shufflevector <2 x double> %m, <2 x double> poison, <8 x i32> <i32 1, i32 0, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison>
  %r = fdiv <2 x double> <double 1.0, double poison>, %b
  %bits = bitcast <2 x double> %r to <2 x i64>
  %bc = shufflevector <2 x i64> %bits, <2 x i64> poison, <8 x i32> <i32 0, i32 0, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison, i32 poison>
  %x = xor <8 x i64> %bc, <i64 0, i64 -9223372036854775808, i64 undef, i64 undef, i64 undef, i64 undef, i64 undef, i64 undef>
  %v = bitcast <8 x i64> %x to <8 x double>
  %t = fmul <8 x double> %w, %v
  %t0 = extractelement <8 x double> %t, i64 0
  %t1 = extractelement <8 x double> %t, i64 1
  %s = fadd double %t0, %t1
  ret double %s
}
define double @grad(ptr %x, ptr %dx) {
  call double (ptr, ...) @__enzyme_autodiff(ptr @f, ptr %x, ptr %dx)
  ret double 0.0
}"""
    text = differentiate(HEADER + body)
    # whether LLVM folds 0 * poison into a wrong lane at run time depends on the registers it
    # picks, so the IR is checked too: no poison lane is left for an adjoint to meet
    derivative = text[text.index("define internal void @diffe"):]
    assert "poison" not in derivative[:derivative.index("\n}")]
    mod = llvm.parse_assembly(text)
    tm = llvm.Target.from_default_triple().create_target_machine()
    pto = llvm.create_pipeline_tuning_options(speed_level=2)
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)       # LLVM folds what poison reaches
    engine = jit(str(mod))
    arr = ctypes.c_double * 4
    grad = ctypes.CFUNCTYPE(ctypes.c_double, arr, arr)(engine.get_function_address("grad"))
    x, dx = arr(0.8, -1.3, 1.7, 0.4), arr(0.0, 0.0, 0.0, 0.0)
    grad(x, dx)
    a0, a1, b0, b1 = x
    # f = (a1 b1 - a0 b0) / b0 = a1 b1 / b0 - a0
    want = [-1.0, b1 / b0, -a1 * b1 / b0 ** 2, a1 / b0]
    assert list(dx) == pytest.approx(want, rel=1e-12)


def test_local_names_near_llvms_length_limit():
    """SROA and inlining make local names of a thousand characters (`%.sroa.3.i.i.i...`); LLVM
    cuts a name at 1024, so two that differ only at their end would clash once a prefix of
    ours lengthens them ("multiple definition of local value": an internal error on Eigen's
    SelfAdjointEigenSolver built with -mavx2)."""
    a, b = "%" + "s.i" * 340 + ".x1", "%" + "s.i" * 340 + ".x2"      # 1023 characters each
    body = f"""
define double @f(ptr %p) {{
  {a} = load double, ptr %p
  %q = getelementptr double, ptr %p, i64 1
  {b} = load double, ptr %q
  %m = fmul double {a}, {b}
  %s = call double @llvm.sin.f64(double %m)
  ret double %s
}}
define double @grad(ptr %x, ptr %dx) {{
  call double (ptr, ...) @__enzyme_autodiff(ptr @f, ptr %x, ptr %dx)
  ret double 0.0
}}"""
    engine = jit(differentiate(HEADER + body))
    arr = ctypes.c_double * 2
    grad = ctypes.CFUNCTYPE(ctypes.c_double, arr, arr)(engine.get_function_address("grad"))
    x, dx = arr(0.7, 1.3), arr(0.0, 0.0)
    grad(x, dx)
    c = math.cos(0.7 * 1.3)
    assert list(dx) == pytest.approx([c * 1.3, c * 0.7], rel=1e-12)


def test_max_of_absolute_values_done_on_the_bits():
    """Eigen's `abs(x).maxCoeff()` as LLVM leaves it for AVX-512 at -O0: doubles loaded as
    integers, the sign bits cleared by an and, and the max a select of the integer bits on a
    float comparison. The load becomes a float load, the and |x|, the select a float select
    (refused before: "integer arithmetic on data that holds a float")."""
    body = """
define double @f(ptr %p) {
  %a = load <2 x i64>, ptr %p, align 8
  %abs = and <2 x i64> %a, splat (i64 9223372036854775807)
  %af = bitcast <2 x i64> %abs to <2 x double>
  %q = getelementptr i8, ptr %p, i64 16
  %b = load <2 x double>, ptr %q, align 8
  %bi = bitcast <2 x double> %b to <2 x i64>
  %c = fcmp ogt <2 x double> %af, %b
  %s = select <2 x i1> %c, <2 x i64> %abs, <2 x i64> %bi
  %sf = bitcast <2 x i64> %s to <2 x double>
  %s0 = extractelement <2 x double> %sf, i64 0
  %s1 = extractelement <2 x double> %sf, i64 1
  %sq = fmul double %s0, %s0
  %t = fmul double %s1, 3.0
  %r = fadd double %sq, %t
  ret double %r
}
define double @grad(ptr %x, ptr %dx) {
  call double (ptr, ...) @__enzyme_autodiff(ptr @f, ptr %x, ptr %dx)
  ret double 0.0
}"""
    engine = jit(differentiate(HEADER + body))
    arr = ctypes.c_double * 4
    grad = ctypes.CFUNCTYPE(ctypes.c_double, arr, arr)(engine.get_function_address("grad"))
    x, dx = arr(0.8, -1.3, 0.5, 1.7), arr(0.0, 0.0, 0.0, 0.0)
    grad(x, dx)      # max(|0.8|, 0.5) = 0.8 from x[0]; max(|-1.3|, 1.7) = 1.7 from x[3]
    assert list(dx) == pytest.approx([1.6, 0.0, 0.0, 3.0], rel=1e-12)
    x, dx = arr(-0.8, -1.9, 0.5, 1.7), arr(0.0, 0.0, 0.0, 0.0)
    grad(x, dx)      # |x| at a negative x: the derivative changes sign
    assert list(dx) == pytest.approx([-1.6, -3.0, 0.0, 0.0], rel=1e-12)


STRONG_ZERO_SRC = r"""
#include <stdio.h>
int enzyme_dup;
double __enzyme_autodiff(void *, ...);
typedef struct { double x, xt, ft, res; } state;
/* a trial step computed as 0/0 (NaN) at convergence, kept in the state, and rejected */
__attribute__((noinline)) void iterate(state *s) {
  double r = s->res;
  double dx = -r / (r * r);
  s->xt = s->x + dx;
  s->ft = s->xt * s->xt;
  if (s->ft < s->res) s->x = s->xt;
}
double f(double *p) {
  state s = {p[0], 0, 0, 0.0};
  iterate(&s);
  return s.x * s.x;
}
int main(void) {
  double p = 1.5, dp = 0;
  __enzyme_autodiff((void *)f, enzyme_dup, &p, &dp);
  printf("%.17g\n", dp);
  return 0;
}
"""



def test_strong_zero_for_values_stored_and_never_read(tmp_path):
    """A NaN the program stores and never reads back (a rejected trial step in a solver's
    state) with ENZYME_CC_STRONG_ZERO=1: the true derivative, 2 p (by default NaN, as in
    Enzyme without its strong-zero option; docs/api.md)."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    src = tmp_path / "sz.c"
    src.write_text(STRONG_ZERO_SRC)
    env = dict(os.environ, ENZYME_CC_STRONG_ZERO="1", ENZYME_CC_CACHE="0")
    subprocess.run([str(Path(sys.executable).parent / "enzyme-cc"), "-O2", str(src), "-o",
                    str(tmp_path / "sz")], check=True, env=env)
    out = subprocess.run([str(tmp_path / "sz")], capture_output=True, text=True).stdout
    assert float(out) == 3.0, out


ROLLBACK_SRC = r"""
#include <stdio.h>
typedef void (*op_t)(double *, int);
void opaque(double *);
static void good(double *x, int n) { x[0] = x[0] * x[0] + n; }
static void bad(double *x, int n);
op_t table[2] = {good, bad};
static void bad(double *x, int n) { if (n > 0) table[n - 1](x, n - 1); opaque(x); }
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
__attribute__((noinline)) void apply(double *x, int k) { table[k](x, 1); x[0] *= 3; }
int main(void) {
  double x[1] = {1.5}, dx[1] = {1.0};
  __enzyme_autodiff((void *)apply, enzyme_dup, x, dx, enzyme_const, 0);
  printf("%g\n", dx[0]);
  return 0;
}
"""


@pytest.mark.parametrize("level", ["-O0", "-O2"])
def test_indirect_target_that_fails_takes_what_named_it_along(tmp_path, level):
    """An indirect call's possible target that cannot be differentiated (it calls a function
    without bitcode) is left out of the dispatcher; what was made while it was tried, here the
    dispatcher of its own indirect call, which named it, goes too (it was an internal error:
    'use of undefined value @aug.bad'). The gradient through the target that runs: 6 x."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    (tmp_path / "m.c").write_text(ROLLBACK_SRC)
    (tmp_path / "o.c").write_text("void opaque(double *x) { x[0] += 1; }\n")
    subprocess.run(["clang-22", "-O2", "-c", str(tmp_path / "o.c"), "-o", str(tmp_path / "o.o")],
                   check=True)
    env = dict(os.environ, ENZYME_CC_CACHE="0")
    subprocess.run([str(Path(sys.executable).parent / "enzyme-cc"), level, str(tmp_path / "m.c"),
                    str(tmp_path / "o.o"), "-o", str(tmp_path / "m")], check=True, env=env)
    out = subprocess.run([str(tmp_path / "m")], capture_output=True, text=True).stdout
    assert float(out) == 9.0, out


def test_failed_derivative_keeps_what_does_not_lead_back_to_it():
    """roll_back drops the failed request, the requests registered meanwhile that never got a
    body, and what names either, transitively; a callee's derivative made meanwhile that names
    neither stays (FFTW's link built each codelet's derivatives again after every failed
    apply variant: twice the synthesis)."""
    from enzyme_cc.ad.synthesis.rollback import Registry, roll_back
    out, done = ["define internal void @before() {\n  ret void\n}\n"], Registry()
    done[("before",)] = ("@before", "void")
    mark = (len(out), set(done), len(done.log))
    done[("x",)] = ("@aug.x.1", "void", "@rev.x.1", "void")           # the request that fails
    done[("helper",)] = ("@aug.h.2", "void", "@rev.h.2", "void")
    out += ["define internal void @aug.h.2(ptr %ad.tape) {\n  ret void\n}\n",
            "define internal void @rev.h.2(ptr %ad.tape) {\n  ret void\n}\n"]
    done[("unfinished",)] = ("@aug.u.3", "void", "@rev.u.3", "void")
    del done[("unfinished",)]                       # (a dispatcher whose build failed)
    done[("calls-x",)] = ("@aug.y.4", "void", "@rev.y.4", "void")
    out += ["define internal void @aug.y.4(ptr %ad.tape) {\n  call void @aug.x.1(ptr %ad.tape)\n"
            "  ret void\n}\n",
            "define internal void @rev.y.4(ptr %ad.tape) {\n  call void @rev.h.2(ptr %ad.tape)\n"
            "  call void @rev.x.1(ptr %ad.tape)\n  ret void\n}\n"]
    done[("calls-y",)] = ("@\"fwd.z<1>.5\"", "double")
    out.append('define internal double @"fwd.z<1>.5"() {\n  call void @aug.y.4(ptr null)\n'
               '  ret double 0.0\n}\n')
    done[("calls-u",)] = ("@w.6", "void")
    out.append("define internal void @w.6() {\n  call void @rev.u.3(ptr null)\n  ret void\n}\n")
    roll_back(out, done, mark, ("x",))
    assert [e.split("(")[0] for e in out] == ["define internal void @before",
                                              "define internal void @aug.h.2",
                                              "define internal void @rev.h.2"]
    assert set(done) == {("before",), ("helper",)}


def test_copy_out_of_a_local_the_callee_filled_into_a_union_slot():
    """Rust's collect into Result<Vec<f64>, E> (cargo's dev profile): a callee fills a local
    vector (capacity, pointer, length) and copies it into its caller's slot, where the error
    variant keeps a double at the length's offset. The kinds accessed through the copy's two
    ends disagree; the callee's own stores say what it moves (once refused: 'cannot deduce
    the type of the memory being copied'). The caller reads the length through the double's
    bits and indexes with it (once refused as bit manipulation of a double)."""
    body = """
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
define internal void @make(ptr sret([24 x i8]) %out, ptr %x, i64 %n) noinline {
  %v = alloca [24 x i8], align 8
  %cap = add i64 %n, 4
  store i64 %cap, ptr %v, align 8
  %data = getelementptr inbounds double, ptr %x, i64 1
  %pp = getelementptr inbounds i8, ptr %v, i64 8
  store ptr %data, ptr %pp, align 8
  %len = add i64 %n, -1
  %lp = getelementptr inbounds i8, ptr %v, i64 16
  store i64 %len, ptr %lp, align 8
  call void @llvm.memcpy.p0.p0.i64(ptr %out, ptr %v, i64 24, i1 false)
  ret void
}
define double @f(ptr %x, i64 %n) {
entry:
  %slot = alloca [24 x i8], align 8
  %x0 = load double, ptr %x, align 8
  %neg = fcmp olt double %x0, 0.0
  %sp = getelementptr inbounds i8, ptr %slot, i64 16
  br i1 %neg, label %err, label %ok
err:
  store i64 -9223372036854775808, ptr %slot, align 8
  store double %x0, ptr %sp, align 8
  br label %join
ok:
  call void @make(ptr sret([24 x i8]) %slot, ptr %x, i64 %n)
  br label %join
join:
  %tag = load i64, ptr %slot, align 8
  %d = load double, ptr %sp, align 8
  %iserr = icmp eq i64 %tag, -9223372036854775808
  br i1 %iserr, label %bad, label %good
bad:
  %d2 = fmul double %d, %d
  %d3 = fmul double %d2, %d
  ret double %d3
good:
  %len = bitcast double %d to i64
  %dp = getelementptr inbounds i8, ptr %slot, i64 8
  %data = load ptr, ptr %dp, align 8
  %lm1 = add i64 %len, -1
  %lastp = getelementptr inbounds double, ptr %data, i64 %lm1
  %last = load double, ptr %lastp, align 8
  br label %loop
loop:
  %i = phi i64 [ 0, %good ], [ %i1, %loop ]
  %acc = phi double [ %last, %good ], [ %acc1, %loop ]
  %p = getelementptr inbounds double, ptr %data, i64 %i
  %e = load double, ptr %p, align 8
  %sq = fmul double %e, %e
  %acc1 = fadd double %acc, %sq
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %len
  br i1 %more, label %loop, label %done
done:
  ret double %acc1
}
define void @test(ptr %x, ptr %dx, i64 %n) {
  %r = call double (ptr, ...) @__enzyme_autodiff(ptr @f, ptr %x, ptr %dx, ptr @enzyme_const, i64 %n)
  ret void
}"""
    g = run(body, "test", None, ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double),
            ctypes.c_int64)
    for xs, want in (([0.5, 1.5, -2.0, 3.0], [0.0, 3.0, -4.0, 7.0]),
                     ([-0.5, 1.5, -2.0, 3.0], [0.75, 0.0, 0.0, 0.0])):
        x = (ctypes.c_double * 4)(*xs)
        dx = (ctypes.c_double * 4)()
        g(x, dx, 4)
        assert list(dx) == pytest.approx(want)


def test_reference_count_beside_a_float_is_an_integer():
    """Rust's `Rc<Cell<f64>>`: a heap block {strong count, weak count, f64}. The counts are
    loaded, stepped by one and stored back in place; no typed access says what lies at their
    offsets, and the block's one float kind made them look like a double's bits ('integer
    arithmetic on data that holds a float'). A count set to a small constant (@f) or only
    stepped in place (@g, whose header a callee initialized) is an integer."""
    body = """
declare ptr @malloc(i64)
declare void @free(ptr)
define internal ptr @boxed(double %v) noinline {
  %b = call ptr @malloc(i64 24)
  %one = add i64 0, 1
  store i64 %one, ptr %b, align 8
  %wp = getelementptr inbounds i8, ptr %b, i64 8
  store i64 %one, ptr %wp, align 8
  %vp = getelementptr inbounds i8, ptr %b, i64 16
  store double %v, ptr %vp, align 8
  ret ptr %b
}
define internal void @release(ptr %b) {
  %c = load i64, ptr %b, align 8
  %c1 = add i64 %c, -1
  store i64 %c1, ptr %b, align 8
  %dead = icmp eq i64 %c1, 0
  br i1 %dead, label %gone, label %kept
gone:
  call void @free(ptr %b)
  br label %kept
kept:
  ret void
}
define double @f(double %x) {
  %b = call ptr @malloc(i64 24)
  store i64 1, ptr %b, align 8
  %wp = getelementptr inbounds i8, ptr %b, i64 8
  store i64 1, ptr %wp, align 8
  %vp = getelementptr inbounds i8, ptr %b, i64 16
  %x2 = fmul double %x, %x
  store double %x2, ptr %vp, align 8
  %v = load double, ptr %vp, align 8
  %r = fmul double %v, %x
  call void @release(ptr %b)
  ret double %r
}
define double @g(double %x) {
  %x2 = fmul double %x, %x
  %b = call ptr @boxed(double %x2)
  %vp = getelementptr inbounds i8, ptr %b, i64 16
  %v = load double, ptr %vp, align 8
  %r = fmul double %v, %x
  %c = load i64, ptr %b, align 8
  %c1 = add i64 %c, -1
  store i64 %c1, ptr %b, align 8
  %dead = icmp eq i64 %c1, 0
  br i1 %dead, label %gone, label %kept
gone:
  call void @free(ptr %b)
  br label %kept
kept:
  ret double %r
}
define double @df(double %x) {
  %r = call double (ptr, ...) @__enzyme_autodiff(ptr @f, double %x)
  ret double %r
}
define double @dg(double %x) {
  %r = call double (ptr, ...) @__enzyme_autodiff(ptr @g, double %x)
  ret double %r
}"""
    for entry in ("df", "dg"):
        d = run(body, entry, ctypes.c_double, ctypes.c_double)
        assert d(1.5) == pytest.approx(3 * 1.5 ** 2), entry
