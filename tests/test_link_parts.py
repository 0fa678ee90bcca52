"""A large derivative whose functions stay calls (noinline) is optimized and compiled in parts
in parallel (lto/optimize.py optimize_and_emit): the gradient matches central finite
differences. With the cache on, each part's object is cached by its bitcode: after one function
is edited, the relink recompiles only the part that changed (a function's derivatives go to
its part), and the gradient is the edited program's."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
N = 120     # functions: a derivative text above lto/optimize.py's SPLIT_TEXT

FUNC = """__attribute__((noinline)) static double g{k}(const double *x, int m) {{
  double s = 0;
  for (int i = 0; i < m; i++) {{
    double t = x[i] * {a:.3f} + {b:.3f}, u = sin(t) * x[(i + {k}) % m];
    if (t > 0.3) s += u;
    else s += u + log1p((t - 0.3) * (t - 0.3));     /* continuous: FD may step over it */
  }}
  return s;
}}
"""
MAIN = """
double total(const double *x, int m) {{
  double s = 0;
{calls}
  return s;
}}
int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
int main(void) {{
  double x[6], dx[6] = {{0}}, h = 1e-6;
  int bad = 0;
  for (int i = 0; i < 6; i++) x[i] = 0.2 + 0.13 * i;
  __enzyme_autodiff((void *)total, enzyme_dup, x, dx, enzyme_const, 6);
  for (int i = 0; i < 6; i++) {{
    double x0 = x[i];
    x[i] = x0 + h; double fp = total(x, 6);
    x[i] = x0 - h; double fm = total(x, 6);
    x[i] = x0;
    double fd = (fp - fm) / (2 * h);
    int ok = fabs(dx[i] - fd) <= 1e-6 * (1 + fabs(fd));
    printf("CHECK dx[%d] %.12g %.12g%s\\n", i, dx[i], fd, ok ? "" : "  <-- FAILED");
    bad += !ok;
  }}
  return bad != 0;
}}
"""


def _program(tmp_path, edited=None):
    funcs = [FUNC.format(k=k, a=0.5 + (k % 7) * 0.1 + (0.25 if k == edited else 0),
                         b=(k % 5) * 0.05) for k in range(N)]
    calls = "\n".join(f"  s += g{k}(x, m);" for k in range(N))
    src = tmp_path / "parts.c"
    src.write_text("#include <math.h>\n#include <stdio.h>\n" + "".join(funcs)
                   + MAIN.format(calls=calls))
    return src


def _build_and_check(tmp_path, src, env):
    """(parts, parts taken from the cache) of a link whose gradient matches differences."""
    b = subprocess.run([str(BIN / "enzyme-cc"), "-O2", "-v", str(src), "-lm", "-o", "parts"],
                       cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600)
    assert b.returncode == 0, b.stderr[-3000:]
    m = re.search(r"codegen, (\d+) parts on \d+ cores \((\d+) from the cache\)", b.stderr)
    assert m, [ln for ln in b.stderr.splitlines() if ln.startswith("enzyme-cc: ")]
    r = subprocess.run(["./parts"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout
    assert r.stdout.count("CHECK") == 6
    return int(m.group(1)), int(m.group(2)), r.stdout


def test_parts_in_parallel(tmp_path):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one core: post-AD work is not split")
    env = dict(os.environ, ENZYME_CC_CACHE="0")
    parts, reused, _ = _build_and_check(tmp_path, _program(tmp_path), env)
    assert parts == 2 and reused == 0


def test_line_tables_keep_the_parts(tmp_path):
    """Debug info of line tables alone (`-gline-tables-only`; Rust's standard library carries
    it into every Rust program's AD module) does not keep a large derivative in one part: only
    debug info naming globals does (lto/optimize.py split_blocked_by_debug). The binary's line
    table still names the source."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one core: post-AD work is not split")
    from elftools.elf.elffile import ELFFile
    env = dict(os.environ, ENZYME_CC_CACHE="0")
    src = _program(tmp_path)
    b = subprocess.run([str(BIN / "enzyme-cc"), "-O2", "-gline-tables-only", "-v", str(src),
                        "-lm", "-o", "parts"], cwd=tmp_path, capture_output=True, text=True,
                       env=env, timeout=600)
    assert b.returncode == 0, b.stderr[-3000:]
    assert re.search(r"codegen, 2 parts on \d+ cores", b.stderr), b.stderr[-3000:]
    r = subprocess.run(["./parts"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.count("CHECK") == 6, r.stdout
    with open(tmp_path / "parts", "rb") as f:
        dwarf = ELFFile(f).get_dwarf_info()
        files = {fe.name for cu in dwarf.iter_CUs()
                 for fe in dwarf.line_program_for_CU(cu)["file_entry"]}
    assert b"parts.c" in files, files


def test_debug_info_naming_globals_keeps_one_part():
    from enzyme_cc.lto.optimize import split_blocked_by_debug
    lines = "!0 = !DILocation(line: 3, column: 1, scope: !1)\n"
    assert not split_blocked_by_debug(lines + "  #dbg_value(double %x, !5, !DIExpression(), !0)")
    assert split_blocked_by_debug(lines + "  #dbg_value(ptr @counter, !5, !DIExpression(), !0)")
    assert split_blocked_by_debug(lines + "  call void @llvm.dbg.value(metadata ptr @s, "
                                  "metadata !5, metadata !DIExpression())")
    assert split_blocked_by_debug(lines + '!7 = distinct !DIGlobalVariable(name: "n", scope: !1)')


def test_edit_recompiles_only_changed_parts(tmp_path):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one core: post-AD work is not split")
    env = dict(os.environ, ENZYME_CC_CACHE_DIR=str(tmp_path / "cache"))
    parts, reused, before = _build_and_check(tmp_path, _program(tmp_path), env)
    assert parts > 2 and reused == 0
    parts2, reused2, after = _build_and_check(tmp_path, _program(tmp_path, edited=30), env)
    # g30 and its derivatives recompiled: one part (they share their primal's part; without
    # that, g30, aug.g30 and rev.g30 lie in three parts of the four)
    assert parts2 == parts and reused2 == parts - 1
    assert before != after                              # and they are the edited program's


REGION = """__attribute__((noinline)) static void r{k}(const double *x, double *y, int m) {{
  #pragma omp parallel for
  for (int i = 0; i < m; i++) {{
    double t = x[i] * {a:.3f} + x[(i + {k}) % m], u = sin(t) * exp(-t * t);
    y[i] += t > 0.5 ? u * t : u + log1p(t * t);
  }}
}}
"""
OMP_MAIN = """
double total(const double *x, int m) {{
  double y[64] = {{0}}, s = 0;
{calls}
  for (int i = 0; i < m; i++) s += y[i] * y[i];
  return s;
}}
""" + MAIN[MAIN.index("int enzyme_dup"):]     # main: total's gradient against differences


def test_openmp_regions_spread_over_parts(tmp_path):
    """The derivatives of a program's OpenMP regions go to different parts: they name the
    same runtime state and source-location records, which llvm-split would otherwise keep
    together with every user (one part of nearly all the code: no parallel codegen)."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one core: post-AD work is not split")
    n = 24
    src = tmp_path / "regions.c"
    src.write_text("#include <math.h>\n#include <stdio.h>\n"
                   + "".join(REGION.format(k=k, a=0.3 + 0.05 * (k % 9)) for k in range(n))
                   + OMP_MAIN.format(calls="\n".join(f"  r{k}(x, y, m);" for k in range(n))))
    env = dict(os.environ, ENZYME_CC_CACHE="0", ENZYME_CC_DUMP_DIR=str(tmp_path / "dump"))
    b = subprocess.run([str(BIN / "enzyme-cc"), "-O2", "-fopenmp", str(src), "-lm", "-o",
                        "regions"], cwd=tmp_path, capture_output=True, text=True, env=env,
                       timeout=600)
    assert b.returncode == 0, b.stderr[-3000:]
    for threads in ("1", "2"):
        r = subprocess.run(["./regions"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=60, env=dict(os.environ, OMP_NUM_THREADS=threads))
        assert r.returncode == 0 and r.stdout.count("CHECK") == 6, r.stdout
    from enzyme_cc.lto import optimize
    out = tmp_path / "ad.o"
    module = optimize.parse_text((tmp_path / "dump" / "after-ad.ll").read_text(),
                                 optimize.new_context())
    os.environ["ENZYME_CC_CACHE"] = "0"         # two parts, none from the cache
    try:
        parts, _ = optimize.optimize_and_emit(module, str(out), 2, str(tmp_path))
    finally:
        del os.environ["ENZYME_CC_CACHE"]
    sizes = [os.path.getsize(tmp_path / f"adpart{k}") for k in range(parts)]
    assert parts == 2 and min(sizes) > 0.25 * sum(sizes), sizes


LIBRARY = """static double lib_acc;
__attribute__((noinline)) static void lib{k}(double v) {{
  for (int i = 0; i < 3; i++) lib_acc += v * {a:.2f} + i;
}}
"""


def test_code_no_derivative_reaches_spreads_over_parts(tmp_path):
    """Local functions AD does not reach and the variables only they name (here 60 `static`
    functions tied together by the `static` they update, as Rust's standard library is by its
    locals) are spread over the post-AD parts (lto/untouched.py), instead of forming one group
    that llvm-split keeps in one part; the derivatives keep their locals. The program still
    computes the library's sum, and the gradient matches differences."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one core: post-AD work is not split")
    n = 60
    src = tmp_path / "parts.c"
    base = _program(tmp_path).read_text()
    lib = "".join(LIBRARY.format(k=k, a=0.5 + k * 0.01).replace(
        "static double lib_acc;\n", "static double lib_acc;\n" if k == 0 else "")
        for k in range(n))
    calls = "".join(f"  lib{k}(x[{k % 6}]);\n" for k in range(n))
    # (the marker in a function of its own, taking no pointers: the pre-AD scope counts what
    # a marker's holder, and a caller passing it pointers, calls as reached)
    main = base[base.index("int main(void) {"):].replace(
        "__enzyme_autodiff((void *)total, enzyme_dup, x, dx, enzyme_const, 6);",
        "for (int i = 0; i < 6; i++) gx[i] = x[i];\n  gradient();\n"
        "  for (int i = 0; i < 6; i++) dx[i] = gdx[i];")
    main = "static double gx[6], gdx[6];\n" \
        "__attribute__((noinline)) static void gradient(void) {\n" \
        "  __enzyme_autodiff((void *)total, enzyme_dup, gx, gdx, enzyme_const, 6);\n}\n" + main
    main = main.replace("  return bad != 0;",
                        calls + '  printf("LIBRARY %.6f\\n", lib_acc);\n  return bad != 0;')
    src.write_text(base[:base.index("int main(void) {")] + lib + main)
    env = dict(os.environ, ENZYME_CC_CACHE="0", ENZYME_CC_DUMP_DIR=str(tmp_path / "dump"))
    b = subprocess.run([str(BIN / "enzyme-cc"), "-O2", str(src), "-lm", "-o", "parts"],
                       cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600)
    assert b.returncode == 0, b.stderr[-3000:]
    r = subprocess.run(["./parts"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.count("CHECK") == 6, r.stdout
    x = [0.2 + 0.13 * i for i in range(6)]
    want = sum(x[k % 6] * (0.5 + k * 0.01) * 3 + 3 for k in range(n))
    assert f"LIBRARY {want:.6f}" in r.stdout, r.stdout
    from enzyme_cc.lto import optimize, untouched

    def library_parts(spread):
        text = (tmp_path / "dump" / "after-ad.ll").read_text()
        module = optimize.parse_text(text, optimize.new_context())
        os.environ["ENZYME_CC_CACHE"] = "0"         # two parts, none from the cache
        try:
            hook = (lambda m: untouched.spread(m, text)) if spread else None
            parts, _ = optimize.optimize_and_emit(module, str(tmp_path / "ad.o"), 2,
                                                  str(tmp_path), before_split=hook)
        finally:
            del os.environ["ENZYME_CC_CACHE"]
        holding = []
        for k in range(parts):
            part = optimize.parse_bitcode((tmp_path / f"adpart{k}").read_bytes(), "part",
                                          optimize.new_context())
            names = {f.name for f in part.functions if not f.is_declaration}
            holding.append(sum(1 for f in names if re.fullmatch(r"(__enzyme_cc_u\.)?lib\d+", f)))
            assert not any(f.startswith(("__enzyme_cc_u.aug.", "__enzyme_cc_u.rev."))
                           for f in names), names
        return holding
    assert sorted(library_parts(False)) == [0, n]       # one group: one part
    spread = library_parts(True)
    assert sum(spread) == n and min(spread) >= n // 4, spread


SPREAD_MODULE = """
@state = internal global double 0.0
@shared = internal global double 1.0
@tls = internal thread_local global double 0.0
define internal double @helper(double %x) #0 {
  %a = load double, ptr @state
  %t = load double, ptr @tls
  %s = fadd double %a, %t
  ret double %s
}
define internal double @other(double %x) #0 {
  %s = load double, ptr @shared
  ret double %s
}
define internal double @prim(double %x) {
  %s = load double, ptr @shared
  %y = fmul double %x, %s
  ret double %y
}
define internal double @rev.prim(double %x) {
  %y = call double @prim(double %x)
  ret double %y
}
define double @entry(double %x) {
  %a = call double @helper(double %x)
  %b = call double @rev.prim(double %a)
  %c = call double @other(double %b)
  ret double %c
}
attributes #0 = { nounwind "enzyme-cc-unreached" }
"""


def test_spread_names_only_what_ad_did_not_reach():
    """lto/untouched.py on a module by hand: the functions the pre-AD scope marked unreached
    become hidden definitions of our own names, with `state`, which only they name; `shared`,
    which the reached `prim` names too, the thread-local, the derivative, its primal and the
    external function stay as they were."""
    import llvmlite.binding as llvm
    from enzyme_cc.lto import optimize, untouched
    module = optimize.parse_text(SPREAD_MODULE, optimize.new_context())
    assert untouched.spread(module, SPREAD_MODULE) == 3
    link = {g.name: (g.linkage, g.visibility)
            for g in list(module.functions) + list(module.global_variables)}
    hidden = (llvm.Linkage.external, llvm.Visibility.hidden)
    for name in ("helper", "other", "state"):
        assert link["__enzyme_cc_u." + name] == hidden, name
    for name in ("prim", "rev.prim", "shared", "tls"):
        assert link[name][0] == llvm.Linkage.internal, name
    assert link["entry"] == (llvm.Linkage.external, llvm.Visibility.default)
    module.verify()


def test_llvm_contexts_outlive_their_modules_in_garbage_cycles():
    """A garbage cycle holding a module and its LLVM context (a caught error's traceback that
    reaches the link's frames) is finalized in any order; a context disposed before its module
    made the link segfault in LLVMContext::removeModule, now and then, in the middle of a build.
    Contexts from lto.optimize.new_context live to the end of the process."""
    code = ("import gc\n"
            "import llvmlite.binding as llvm\n"
            "from lto import optimize as opt\n"
            "for k in range(20):\n"
            "    ctx = opt.new_context()\n"
            "    m = llvm.parse_assembly('define i32 @f() { ret i32 0 }', ctx)\n"
            "    cycle = [ctx, m]\n"
            "    cycle.append(cycle)\n"
            "    del ctx, m, cycle\n"
            "    gc.collect()\n"
            "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == "ok\n", (r.returncode, r.stderr)
