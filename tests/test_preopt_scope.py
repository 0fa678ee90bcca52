"""The pre-AD optimization runs only on code AD can reach (lto/preopt_scope.py); the rest of
the program is optimized once, after AD. Gradients must not change, and what AD reaches
(directly, through globals, markers, and indirect calls) must still be optimized before AD."""
import os
import re

from conftest import run

from enzyme_cc.lto.preopt_scope import mark_unreached, reached_definitions, unmark

PROGRAM = r"""
#include <math.h>
#include <stdio.h>
extern double __enzyme_autodiff(void *, ...);
extern int enzyme_dup, enzyme_const;

typedef double (*unary)(double);
static double sq(double t) { return t * t; }
static double cube(double t) { return t * t * t; }
unary table[2] = {sq, cube};            /* reached only through a pointer loaded in f */

double helper(double x) { double a[4]; for (int i = 0; i < 4; i++) a[i] = sin(x * i);
  return a[0] + a[1] * a[2] + a[3]; }
double f(double *x, int k) { return helper(x[0]) * x[1] + table[k](x[1]); }

/* big, unrelated to AD: optimized only after AD */
double unrelated(double *v, int n) { double s = 0; for (int i = 0; i < n; i++) s += v[i] * i;
  return s; }

int main(void) {
  double v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  double x[2] = {0.7, 1.3}, dx[2] = {0, 0};
  __enzyme_autodiff((void *)f, enzyme_dup, x, dx, enzyme_const, 1);
  double h = 1e-6, xp[2] = {x[0] + h, x[1]}, xm[2] = {x[0] - h, x[1]};
  double fd0 = (f(xp, 1) - f(xm, 1)) / (2 * h);
  xp[0] = xm[0] = x[0], xp[1] = x[1] + h, xm[1] = x[1] - h;
  double fd1 = (f(xp, 1) - f(xm, 1)) / (2 * h);
  printf("%.9f %.9f %.9f %.9f %g\n", dx[0], fd0, dx[1], fd1, unrelated(v, 8));
  return fabs(dx[0] - fd0) > 1e-6 || fabs(dx[1] - fd1) > 1e-6 || dx[1] == 0;
}
"""


def _function(text, name):
    m = re.search(rf"^define [^\n]*@{name}\(.*?^}}", text, re.M | re.S)
    assert m, name
    return m.group(0)


def test_gradient_and_scope(tmp_path):
    (tmp_path / "p.c").write_text(PROGRAM)
    dump = tmp_path / "dump"
    env = dict(os.environ, ENZYME_CC_DUMP_DIR=str(dump), ENZYME_CC_CACHE="0")
    run(["enzyme-cc", "-O2", "p.c", "-lm", "-o", "p"], cwd=tmp_path, env=env)
    out = run(["./p"], cwd=tmp_path).stdout.split()
    assert out[-1] == "168"
    before = (dump / "before-ad.ll").read_text()
    # reached code was optimized before AD (mem2reg: no allocas left in the table's targets),
    # unreached code was not, and the tag is gone
    assert "alloca" not in _function(before, "cube")
    assert "alloca" in _function(before, "unrelated")
    assert "enzyme-cc-later" not in before
    assert not re.search(r"attributes #\d+ = \{[^}]*optnone", before)


def test_mark_unreached_text():
    text = "\n".join([
        '@__enzyme_register_gradient_h = global [3 x ptr] [ptr @h, ptr @ah, ptr @rh]',
        '@tbl = global [1 x ptr] [ptr @t]',
        'define double @f(double %x) #0 {\n  %1 = call double @g(double %x)\n  ret double %1\n}',
        'define double @g(double %x) #0 {\n  %p = load ptr, ptr @tbl\n'
        '  %1 = call double %p(double %x)\n  ret double %1\n}',
        'define double @t(double %x) #0 {\n  ret double %x\n}',
        'define double @h(double %x) #0 {\n  ret double %x\n}',
        'define double @ah(double %x) #0 {\n  ret double %x\n}',
        'define double @rh(double %x) #0 {\n  ret double %x\n}',
        'define double @lonely(double %x) #0 {\n  ret double %x\n}',
        'define double @inl(double %x) #1 {\n  ret double %x\n}',
        'define i32 @main() #0 {\n  %1 = call double (ptr, ...) @__enzyme_autodiff(ptr @f, '
        'double 1.0)\n  ret i32 0\n}',
        'declare double @__enzyme_autodiff(ptr, ...)',
        'attributes #0 = { nounwind }',
        'attributes #1 = { alwaysinline nounwind }',
    ])
    marked = mark_unreached(text)
    tagged = {m.group(1) for m in re.finditer(r"^define [^@]*@(\w+)\(.*#2 \{", marked, re.M)}
    assert tagged == {"lonely"}      # f, g (marker), t (indirect call), h/ah/rh (registration)
    assert 'attributes #2 = { nounwind noinline optnone "enzyme-cc-later" ' \
        '"enzyme-cc-unreached" }' in marked
    # an unreached function left unoptimized by its attributes is marked unreached all the same
    # (lto/untouched.py spreads such code over the post-AD parts)
    assert re.search(r"^define double @inl\(.*#3 \{", marked, re.M)
    assert 'attributes #3 = { alwaysinline nounwind "enzyme-cc-unreached" }' in marked
    back = unmark(marked)
    assert 'attributes #2 = { nounwind "enzyme-cc-unreached" }' in back and "optnone" not in back


def test_calls_on_paths_that_never_return_are_not_reached():
    """What only a block that never returns names (a panic and the formatting behind it, an
    abort) runs as primal code: not reached. Rust's panic paths brought most of std into
    the link. A call of enzyme-cc's own runtime (__enzyme_cc_*) holds no marker."""
    text = "\n".join([
        'define double @f(double %x) #0 {\nentry:\n  %c = fcmp olt double %x, 0.0\n'
        '  br i1 %c, label %bad, label %ok\nbad:\n  call void @panic_fmt(ptr @report)\n'
        '  unreachable\nok:\n  %p = call ptr @__enzyme_cc_helper(i64 8)\n'
        '  %y = call double @g(double %x)\n  ret double %y\n}',
        'define double @g(double %x) #0 {\n  ret double %x\n}',
        'define void @panic_fmt(ptr %f) #0 {\n  call void %f()\n  unreachable\n}',
        'define void @report() #0 {\n  ret void\n}',
        'define ptr @__enzyme_cc_helper(i64 %n) #0 {\n  %p = call ptr @__enzyme_cc_helper(i64 %n)\n'
        '  ret ptr %p\n}',
        'define i32 @main() #0 {\n  %1 = call double (ptr, ...) @__enzyme_autodiff(ptr @f, '
        'double 1.0)\n  ret i32 0\n}',
        'declare double @__enzyme_autodiff(ptr, ...)',
        'attributes #0 = { nounwind }',
    ])
    marked = mark_unreached(text)
    tagged = {m.group(1) for m in re.finditer(r"^define [^@]*@(\w+)\(.*#1 \{", marked, re.M)}
    assert tagged == {"panic_fmt", "report"}, tagged


def _defines(*functions):
    return "\n".join([*functions, "declare double @__enzyme_autodiff(ptr, ...)",
                      "declare void @print(ptr)", "attributes #0 = { nounwind }"])


def test_function_handed_down_by_callers():
    """A helper holding the marker takes the function as a parameter (`check(f)`); its callers
    hand it constants, up to Rust's main, which takes no parameters and is itself run through a
    pointer (std's lang_start). The functions handed down are reached; what main and the
    helpers call besides (printing: Rust's formatting, most of std) is not, so that its objects
    keep their compiled code; before, main's address being taken made everything reached."""
    text = _defines(
        'define double @f(double %x) #0 {\n  %y = call double @g(double %x)\n  ret double %y\n}',
        'define double @g(double %x) #0 {\n  ret double %x\n}',
        'define double @unused(double %x) #0 {\n  ret double %x\n}',
        'define double @check(ptr %name, ptr %fn, double %x) #0 {\n'
        '  call void @print(ptr %name)\n'
        '  %d = call double (ptr, ...) @__enzyme_autodiff(ptr %fn, double %x)\n  ret double %d\n}',
        'define double @outer(ptr %fn) #0 {\n'
        '  %d = call double @check(ptr @name, ptr %fn, double 1.0)\n  ret double %d\n}',
        'define void @main() #0 {\n  call void @print(ptr @banner)\n'
        '  %d = call double @outer(ptr @f)\n  ret void\n}',
        'define void @print(ptr %s) #0 {\n  ret void\n}',
        'define i32 @lang_start() #0 {\n  call void @run(ptr @main)\n  ret i32 0\n}',
        'define void @run(ptr %m) #0 {\n  call void %m()\n  ret void\n}',
        '@name = constant [2 x i8] c"f\\00"', '@banner = constant [2 x i8] c"b\\00"')
    reached, holders = reached_definitions(text)
    assert holders == {"check", "outer", "main"}, holders
    assert {"f", "g", "name", "check", "outer", "main"} <= reached, reached
    assert not reached & {"unused", "print", "banner", "lang_start", "run"}, reached


def test_function_computed_by_a_caller():
    """A caller that computes the function it hands down (a select of two) has every function
    it names reached, as a holder whose marker gets a value."""
    text = _defines(
        'define double @a(double %x) #0 {\n  ret double %x\n}',
        'define double @b(double %x) #0 {\n  ret double %x\n}',
        'define double @check(ptr %fn) #0 {\n'
        '  %d = call double (ptr, ...) @__enzyme_autodiff(ptr %fn, double 1.0)\n  ret double %d\n}',
        'define i32 @main(i32 %n, ptr %argv) #0 {\n  %c = icmp eq i32 %n, 1\n'
        '  %fn = select i1 %c, ptr @a, ptr @b\n  %d = call double @check(ptr %fn)\n  ret i32 0\n}')
    reached, _ = reached_definitions(text)
    assert {"a", "b", "check", "main"} <= reached, reached


def test_indirect_call_reaches_its_signature():
    """An indirect call in reached code reaches the address-taken functions of its signature
    (AD dispatches over those), not every address-taken function: Rust's std takes the
    address of thousands (formatting, drop glue) that a differentiated trait call cannot
    land on."""
    text = _defines(
        'define double @f(ptr %p, double %x) #0 {\n  %y = call double %p(double %x)\n'
        '  ret double %y\n}',
        'define double @sq(double %x) #0 {\n  ret double %x\n}',
        'define i1 @fmt(ptr %a, ptr %b) #0 {\n  ret i1 false\n}',
        'define double @two(double %x, double %y) #0 {\n  ret double %x\n}',
        'define void @main() #0 {\n  %d = call double (ptr, ...) @__enzyme_autodiff(ptr @f, '
        'ptr @sq, double 1.0)\n  call void @print(ptr @table)\n  ret void\n}',
        '@table = constant [2 x ptr] [ptr @fmt, ptr @two]')
    reached, _ = reached_definitions(text)
    assert "sq" in reached and not reached & {"fmt", "two"}, reached


def test_trait_object_call_reaches_its_vtable_slot():
    """rustc reads a trait object's method from its vtable with `!invariant.load`: memory that
    never changes, so the callee is a function at that offset of a constant table. Such a call
    reaches those functions only; std's other functions of the signature (a drop glue a
    thread-local destructor list holds, stored by code) are reached by a plain indirect call
    alone. Before, a Box<dyn Trait>'s drop brought in most of std, and the link took a minute.
    A call returning nothing does not reach functions returning an aggregate."""
    text = _defines(
        'define double @f(ptr %obj, ptr %vt, double %x) #0 {\n'
        '  %m = getelementptr inbounds nuw i8, ptr %vt, i64 24\n'
        '  %area = load ptr, ptr %m, align 8, !invariant.load !0\n'
        '  %y = call double %area(ptr %obj, double %x)\n'
        '  %drop = load ptr, ptr %vt, align 8, !invariant.load !0\n'
        '  call void %drop(ptr %obj)\n  ret double %y\n}',
        'define double @sq_area(ptr %s, double %x) #0 {\n  ret double %x\n}',
        'define double @other_method(ptr %s, double %x) #0 {\n  ret double %x\n}',
        'define void @drop_sq(ptr %s) #0 {\n  ret void\n}',
        'define void @drop_registered(ptr %s) #0 {\n  call void @print(ptr %s)\n  ret void\n}',
        'define { ptr, ptr } @pair(ptr %s) #0 {\n  ret { ptr, ptr } zeroinitializer\n}',
        'define void @register(ptr %list) #0 {\n  store ptr @drop_registered, ptr %list\n'
        '  store ptr @pair, ptr %list\n  ret void\n}',
        'define void @run_dtors(ptr %list, ptr %x) #0 {\n  %d = load ptr, ptr %list\n'
        '  call void %d(ptr %x)\n  ret void\n}',
        'define void @main() #0 {\n  %d = call double (ptr, ...) @__enzyme_autodiff(ptr @f, '
        'ptr @vt_sq, double 1.0)\n  call void @print(ptr @vt_other)\n  ret void\n}',
        '@vt_sq = private unnamed_addr constant <{ ptr, [16 x i8], ptr }> '
        '<{ ptr @drop_sq, [16 x i8] c"\\08\\00\\00\\00\\00\\00\\00\\00\\08\\00\\00\\00\\00\\00\\00\\00", '
        'ptr @sq_area }>, align 8',
        '@vt_other = private unnamed_addr constant <{ ptr, [16 x i8], ptr, ptr }> '
        '<{ ptr null, [16 x i8] c"\\08\\00\\00\\00\\00\\00\\00\\00\\08\\00\\00\\00\\00\\00\\00\\00", '
        'ptr @sq_area, ptr @other_method }>, align 8',
        '!0 = !{}')
    reached, _ = reached_definitions(text)
    assert {"sq_area", "drop_sq"} <= reached, reached
    assert not reached & {"other_method", "drop_registered", "pair", "run_dtors"}, reached
    # a plain indirect call of the same signature reaches every one
    plain = text.replace('ptr @vt_sq, double 1.0)', 'ptr @vt_sq, double 1.0)\n'
                         '  call void @run_dtors(ptr null, ptr null)')
    plain = plain.replace("__enzyme_autodiff(ptr @f,", "__enzyme_autodiff(ptr @g,").replace(
        "define void @main", 'define void @g(ptr %l) #0 {\n  call void @run_dtors(ptr %l, '
        'ptr %l)\n  ret void\n}\ndefine void @main')
    reached, _ = reached_definitions(plain)
    assert {"drop_sq", "drop_registered"} <= reached and "pair" not in reached, reached
    # where the tables cannot be read (IR the module index refuses), the signature decides
    from enzyme_cc.lto import preopt_scope

    def refuse(text):
        raise ValueError("cannot find function name")
    saved, preopt_scope.parse_module = preopt_scope.parse_module, refuse
    try:
        reached, _ = reached_definitions(text)
    finally:
        preopt_scope.parse_module = saved
    assert {"sq_area", "other_method", "drop_registered"} <= reached, reached


def test_rust_allocator_references_renamed():
    """References to std's __rdl_* (v0-mangled) become enzyme-cc's allocator; std's definition
    stays, and a name without a declaration gets one."""
    from enzyme_cc.rules.rust_alloc import substitute
    std = "_RNvCsfLfy6EI15iL_7___rustc11___rdl_alloc"
    text = (f"define ptr @shim(i64 %n) {{\n  %p = call ptr @{std}(i64 %n, i64 8)\n  ret ptr %p\n}}\n"
            f"define hidden ptr @{std}(i64 %0, i64 %1) {{\n  ret ptr null\n}}")
    out, used = substitute(text)
    assert used and f"define hidden ptr @{std}(" in out
    assert "call ptr @__enzyme_cc_rust_rdl_alloc(i64 %n, i64 8)" in out
    assert out.endswith("declare ptr @__enzyme_cc_rust_rdl_alloc(i64, i64)")
    assert substitute("define void @f() {\n  ret void\n}") == \
        ("define void @f() {\n  ret void\n}", False)


def test_marker_function_through_a_select():
    """Bitcode optimized at its compile step (rustc's) may pass the marker a select or phi of
    functions (two autodiff! arms merged into one call): the functions the holder names are
    reached, and so is what they call (Rust's allocator shim; left unoptimized, it stayed a
    call whose result got no shadow)."""
    text = "\n".join([
        'define double @a(double %x) #0 {\n  %1 = call ptr @alloc(i64 8)\n  ret double %x\n}',
        'define double @b(double %x) #0 {\n  ret double %x\n}',
        'define ptr @alloc(i64 %n) #0 {\n  %p = call ptr @malloc(i64 %n)\n  ret ptr %p\n}',
        'define double @lonely(double %x) #0 {\n  ret double %x\n}',
        'define i32 @main(i1 %c) #0 {\n  %f = select i1 %c, ptr @a, ptr @b\n'
        '  %1 = call double (ptr, ...) @__enzyme_autodiff(ptr %f, double 1.0)\n  ret i32 0\n}',
        'declare double @__enzyme_autodiff(ptr, ...)',
        'declare ptr @malloc(i64)',
        'attributes #0 = { nounwind }',
    ])
    marked = mark_unreached(text)
    tagged = {m.group(1) for m in re.finditer(r"^define [^@]*@(\w+)\(.*#1 \{", marked, re.M)}
    assert tagged == {"lonely"}


WRAPPER = r"""
#include <math.h>
#include <stdio.h>
extern double __enzyme_autodiff(void *, ...);
typedef double (*fn)(double);
static double cube(double t) { return t * t * t; }
static double other(double t) { return t + 1; }
/* the function to differentiate reaches the marker through a parameter, as in Enzyme's C++
   header: the callers must be optimized before AD so the marker sees a constant */
static double grad(fn f, double x) { return __enzyme_autodiff((void *)f, x); }
int main(int argc, char **argv) {
  double g = grad(cube, 1.5 + argc - 1), h = other(2.0);
  printf("%g %g\n", g, h);
  return fabs(g - 6.75) > 1e-12;
}
"""


def test_marker_operands_from_callers(tmp_path):
    (tmp_path / "w.c").write_text(WRAPPER)
    for opt in ("-O1", "-O2"):
        run(["enzyme-cc", opt, "w.c", "-lm", "-o", "w"], cwd=tmp_path)
        assert run(["./w"], cwd=tmp_path).stdout.split() == ["6.75", "3"]
