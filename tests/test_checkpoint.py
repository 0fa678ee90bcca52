"""Checkpointed loops (<enzyme/checkpoint.h>): __enzyme_checkpoint_for / __enzyme_checkpoint_while.

The programs in tests/checkpoint/ print `CHECK name got expected` lines (checkpointed gradient
against the plain taped loop's and central differences, state after the gradient, taped-step and
slot counts, forward mode against reverse mode) and exit non-zero on a mismatch."""
import math
import os
import shutil
import subprocess
import sys
from functools import lru_cache

import pytest

from conftest import run, ROOT

HERE = os.path.join(os.path.dirname(__file__), "checkpoint")
INCLUDE = os.path.join(ROOT, "enzyme_cc", "include")


def _build(tmp_path, prog, opt, extra=()):
    src = tmp_path / prog
    shutil.copy(os.path.join(HERE, prog), src)
    exe = tmp_path / "prog"
    cxx = prog.endswith(".cpp")
    run(["enzyme-c++" if cxx else "enzyme-cc", opt, *(["-std=c++17"] if cxx else []), *extra,
         str(src), "-lm", "-o", str(exe)], cwd=tmp_path)
    return exe


def _checks(out):
    lines = [l for l in out.splitlines() if l.startswith("CHECK ")]
    assert lines, out
    bad = [l for l in lines if "MISMATCH" in l]
    assert not bad, "\n".join(bad[:20])
    return len(lines)


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("prog", ["ckpt_for.c", "ckpt_cxx.cpp"])
def test_checkpoint_program(tmp_path, prog, opt):
    exe = _build(tmp_path, prog, opt)
    assert _checks(run([str(exe)], cwd=tmp_path).stdout) >= 100


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_checkpoint_vector_and_hvp(tmp_path, opt):
    """Reverse vector mode (widths 2, 3), vector forward mode and forward over reverse (width 1,
    and 2 with enzyme_dupv) through two checkpointed for loops (one in a split callee) and a
    while loop, every scheme: lanes against scalar plain-loop calls and central differences; a
    tape reversed twice (enzyme_nofree); annotated loops under forward over reverse."""
    exe = _build(tmp_path, "ckpt_vector_hvp.c", opt)
    assert _checks(run([str(exe)], cwd=tmp_path).stdout) == 2380


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_checkpoint_loop_attributes_cxx(tmp_path, opt):
    """[[enzyme::checkpoint]] / [[enzyme::checkpointing_enable]] in C++ (a template, an object,
    a std::vector with a size hint, a lambda); the C forms are the corpus's
    checkpoint_loop_attr.c. (Unoptimized, ENZYME_CC_PREOPT=0, the vector's calls are invokes
    out of the loop: refused, see test_checkpoint_loop_errors.)"""
    exe = _build(tmp_path, "ckpt_loop_attr.cpp", opt)
    assert _checks(run([str(exe)], cwd=tmp_path).stdout) >= 90


@pytest.mark.parametrize("opt", ["-O0", "-O2", "-O2-ref"])
def test_checkpoint_loops_nested(tmp_path, opt, monkeypatch):
    """An annotated loop inside an annotated loop, differentiated and in the primal."""
    if opt.endswith("-ref"):
        monkeypatch.setenv("ENZYME_CC_PREOPT", "0")
    exe = _build(tmp_path, "ckpt_loop_nested.c", opt.removesuffix("-ref"))
    assert _checks(run([str(exe)], cwd=tmp_path).stdout) == 21


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_schedule_only_entry_points(tmp_path, opt):
    """__enzyme_ckpt_schedule_*: an adjoint driven by the actions alone, every schedule."""
    exe = _build(tmp_path, "schedule_api.c", opt)
    assert _checks(run([str(exe)], cwd=tmp_path).stdout) == 360


@pytest.mark.parametrize("budget, slots", [(None, 1), (200, 3), (1000, 15)])
def test_enzyme_toml_budget(tmp_path, budget, slots, monkeypatch):
    """[checkpoint] budget_bytes: 64-byte snapshots, so 200 bytes give Revolve 3 slots."""
    if budget is not None:
        (tmp_path / "enzyme.toml").write_text(f"[checkpoint]\nbudget_bytes = {budget}\n")
    monkeypatch.delenv("ENZYME_CC_CONFIG", raising=False)
    exe = _build(tmp_path, "ckpt_budget.c", "-O2")
    out = run([str(exe)], cwd=tmp_path).stdout
    assert _checks(out) == 8 and f"slots {slots}\n" in out, out


@pytest.mark.skipif(not os.environ.get("ENZYME_CC_ADBINOMIAL_C"),
                    reason="Tapenade's adBinomial.c not given (ENZYME_CC_ADBINOMIAL_C=path)")
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_tapenade_binomial_scheme(tmp_path, opt):
    """EnzymeCkptADBinomial with Tapenade's own adBinomial.c (not part of enzyme-cc)."""
    adb = tmp_path / "adBinomial.c"
    shutil.copy(os.environ["ENZYME_CC_ADBINOMIAL_C"], adb)
    header = os.path.join(os.path.dirname(os.environ["ENZYME_CC_ADBINOMIAL_C"]), "adBinomial.h")
    if os.path.exists(header):
        shutil.copy(header, tmp_path / "adBinomial.h")
    exe = _build(tmp_path, "ckpt_adbinomial.c", opt, ["-DENZYME_CKPT_ADBINOMIAL", str(adb)])
    assert _checks(run([str(exe)], cwd=tmp_path).stdout) == 160


def _progress(n, s):
    """enzyme_ckpt_binomial_progress from its definition, with exact binomials."""
    if n <= 1 or s <= 1:
        return max(n, 0)
    t = 0
    while math.comb(s + t, t) < n:
        t += 1
    lo = max(1, n - math.comb(s - 1 + t, t))
    hi = min(n - 1, math.comb(s + t - 1, t - 1))
    return max(1, min((lo + hi) // 2, n - (s - 1)))


def _binomial_forward(n, b):
    """Steps run forward by Enzyme-MLIR's binomial schedule under our driver: the forward sweep
    stops before the last step (the first turn runs it); reversing step cur-1 replays from the
    top slot, placing slots, up to cur-1."""
    slots, pos, q = min(b, n), [], 0
    for k in range(slots):  # the forward sweep: slot k at q
        pos.append(q)
        q += _progress(n - q, min(slots - k, n - q))
    assert q == n
    fwd = n - 1
    for cur in range(n, 0, -1):
        a, q = len(pos) - 1, pos.pop()  # restore the top slot; placing from it re-pushes it
        while q + 1 < cur:
            pos.append(q)
            nq = q + _progress(cur - q, min(slots - a, cur - q))
            fwd += min(nq, cur - 1) - q
            q, a = nq, a + 1
    return fwd


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_checkpoint_schedule_header(tmp_path, opt):
    """<enzyme/checkpoint_schedule.h>'s arithmetic, EnzymeCkptBinomial and EnzymeCkptPeriodic
    on a model of the driver, and schedule 4's gradients (ckpt_schedule.c); the binomial
    scheme's recomputation against this file's own model of Enzyme-MLIR's schedule."""
    exe = _build(tmp_path, "ckpt_schedule.c", opt)
    out = run([str(exe)], cwd=tmp_path).stdout
    assert _checks(out) == 398
    rows = [l.split()[2:] for l in out.splitlines() if l.startswith("sched binomial ")]
    assert len(rows) == 60 * 9
    for n, b, fwd, slots in (map(int, r) for r in rows):
        assert slots <= min(b, n) and fwd == _binomial_forward(n, b), (n, b, fwd, slots)


@lru_cache(None)
def _optimal(l, s):
    """Forward steps of the best binomial schedule (exhaustive over the first advance)."""
    if l <= 1:
        return 0
    if s <= 1:
        return l * (l - 1) // 2
    return min(m + _optimal(m, s) + _optimal(l - m, s - 1) for m in range(1, l))


def test_schedules(tmp_path):
    """The schemes alone, with a fake step: every step reversed once in order from the right
    state; Revolve within its slots and with the optimal recomputation (up to 257 steps); the
    binomial scheme within its slots, recomputing as the model of Enzyme-MLIR's schedule."""
    exe = tmp_path / "sim"
    run(["clang-22", "-O1", "-I", INCLUDE, os.path.join(HERE, "schedule_sim.c"), "-o", str(exe)])
    out = run([str(exe)]).stdout
    sys.setrecursionlimit(10000)
    rows = [l.split() for l in out.splitlines()]
    assert rows and all(r[-1] == "ok" for r in rows), out
    for n, k, name, fwd, slots, _ in rows:
        n, k, fwd, slots = int(n), int(k), int(fwd), int(slots)
        if name == "revolve":
            assert slots <= k and fwd == _optimal(n, max(1, min(k, n))), (n, k, fwd)
        if name == "binomial" and n:
            assert slots <= k and fwd == _binomial_forward(n, k), (n, k, fwd)
        if name in ("periodic", "store_all") and n:
            # one sweep to the last step, then each earlier segment once more but its last step
            seg = -(-n // max(1, min(k if name == "periodic" else 1, n)))
            assert fwd == n - 1 + (-(-n // seg) - 1) * (seg - 1), (n, k, fwd)


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
@pytest.mark.parametrize("prog", ["ckpt_cxx.cpp", "ckpt_loop_attr.cpp", "ckpt_schedule.c",
                                  "ckpt_vector_hvp.c"])
def test_checkpoint_valgrind(tmp_path, prog):
    """Snapshots, run records and per-step tapes: no invalid access, nothing definitely lost.
    (Built with -g: ckpt_schedule.c's __enzyme_checkpoint_for call in a C function with debug
    info once lost its location, and the inlined step call failed LLVM's verifier.)"""
    exe = _build(tmp_path, prog, "-O2", ["-g"])
    run(["valgrind", "-q", "--error-exitcode=1", "--leak-check=full",
         "--errors-for-leak-kinds=definite", str(exe)], cwd=tmp_path)


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_checkpoint_loop_split_valgrind(tmp_path, opt):
    """An annotated loop in a callee differentiated in split mode: the driver reads its stack
    objects (regions, config, carried slots) in the reverse sweep, after the augmented function
    returned; they must live on the heap until then (at -O0 they were the dead frame's)."""
    src = os.path.join(os.path.dirname(__file__), "ad_programs", "checkpoint_loop_split.c")
    exe = tmp_path / "prog"
    run(["enzyme-cc", opt, "-g", src, "-lm", "-o", str(exe)], cwd=tmp_path)
    out = run(["valgrind", "-q", "--error-exitcode=1", "--leak-check=full",
               "--errors-for-leak-kinds=definite", str(exe)], cwd=tmp_path).stdout
    assert out.count("CHECK ") >= 200 and "FAILED" not in out


HEAD = """\
#include <enzyme/checkpoint.h>
void __enzyme_ptr_size_hint(void *, long);
void __enzyme_autodiff(void *, ...);
void __enzyme_fwddiff(void *, ...);
extern int enzyme_dup;
static void step(int64_t i, double *u) { u[0] = u[0] * u[0] + 0.1 * (double)i; }
"""

ERRORS = {
    "no_scheme": ("""
double f(double *u, int64_t n) {
  __enzyme_checkpoint_for((void *)step, 0, n, u);
  return u[0];
}""", "without a scheme"),
    "arity": ("""
double f(double *u, int64_t n) {
  EnzymeCkptConfig c = {2, 0, 0, 0, 0};
  __enzyme_checkpoint_for((void *)step, 0, n, enzyme_scheme, &EnzymeCkptRevolve, &c, u, u);
  return u[0];
}""", "takes 2 parameters"),
    "reverse_over_reverse": ("""
double f(double *u, int64_t n) {
  EnzymeCkptConfig c = {2, 0, 0, 0, 0};
  __enzyme_checkpoint_for((void *)step, 0, n, enzyme_scheme, &EnzymeCkptRevolve, &c,
                          enzyme_checkpoint_region, u, (int64_t)sizeof(double), u);
  return u[0];
}
double g(double *u, double *du) { __enzyme_autodiff((void *)f, enzyme_dup, u, du, 3L);
  return du[0] * du[0]; }
""", "differentiated again in reverse mode is not supported"),
    # forward over reverse: the global's one shadow would be both the tangent and the adjoint
    "hvp_global": ("""
static double drift;
static void gstep(int64_t i, double *u) { drift = 0.5 * drift + u[0]; u[0] = u[0] * drift; }
double f(double *u, int64_t n) {
  EnzymeCkptConfig c = {2, 0, 0, 0, 0};
  drift = 0.1;
  __enzyme_checkpoint_for((void *)gstep, 0, n, enzyme_scheme, &EnzymeCkptRevolve, &c,
                          enzyme_checkpoint_region, u, (int64_t)sizeof(double), u);
  return u[0];
}
void g(double *u, double *du) { __enzyme_autodiff((void *)f, enzyme_dup, u, du, 3L); }
""", "uses the global 'drift', which has a derivative"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_checkpoint_errors(tmp_path, case):
    body, message = ERRORS[case]
    main = "int main(void) { double u[1] = {0.5}, du[1] = {0}, v[1] = {1}, dv[1] = {1};\n"
    if case == "hvp_global":
        main += "  __enzyme_fwddiff((void *)g, enzyme_dup, u, v, enzyme_dup, du, dv); return 0; }\n"
    elif case == "reverse_over_reverse":
        main += ("  __enzyme_autodiff((void *)g, enzyme_dup, u, v, enzyme_dup, du, dv); return 0; "
                 "}\n")
    else:
        main += "  __enzyme_autodiff((void *)f, enzyme_dup, u, du, 3L); return 0; }\n"
    src = tmp_path / "e.c"
    src.write_text(HEAD + body + "\n" + main)
    r = subprocess.run(["enzyme-cc", "-O2", "-g", str(src), "-o", str(tmp_path / "e")],
                       capture_output=True, text=True)
    assert r.returncode != 0, r.stdout
    assert "enzyme-cc: error:" in r.stderr and message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "hint" in r.stderr, r.stderr


# Loops annotated for checkpointing that enzyme-cc cannot outline: link-time errors naming why.
LOOP_ERRORS = {
    "break": ("""
double f(double *u, long n) {
  __enzyme_ptr_size_hint(u, sizeof(double));
  [[enzyme::checkpoint("revolve", 2)]] for (long i = 0; i < n; i++) {
    if (u[0] > 10) break;
    u[0] = u[0] * u[0] + 0.1;
  }
  return u[0];
}""", "must leave from its header or its latch"),
    "extent": ("""
double f(double *u, long n) {
  [[enzyme::checkpoint("revolve", 2)]] for (long i = 0; i < n; i++) u[0] = u[0] * u[0] + 0.1;
  return u[0];
}""", "whose extent enzyme-cc cannot know"),
    "count": ("""
double f(double *u, long n) {
  __enzyme_ptr_size_hint(u, sizeof(double));
  [[enzyme::checkpoint]] for (long i = 0; u[1] < (double)n; i++) { u[1] += 1; u[0] *= 1.1; }
  return u[0];
}""", "number of iterations of a checkpointed loop must be known"),
    "hidden_write": ("""
#include <stdlib.h>
struct S { double *data; double u[2]; };
__attribute__((noinline)) static void advance_s(struct S *s) {
  s->data[0] = s->data[0] * s->u[0];
  s->u[1] += s->data[0];
}
double f(double *u, long n) {
  struct S s = {malloc(sizeof(double)), {u[0], 0}};
  s.data[0] = u[1];
  [[enzyme::checkpoint("revolve", 2)]] for (long i = 0; i < n; i++) advance_s(&s);
  double r = s.u[1];
  free(s.data);
  return r;
}""", "'advance_s', called in the loop, writes memory through"),
    "no_header": ("""
double f(double *u, long n) {
  double a = u[0];
  [[enzyme::checkpoint]] for (long i = 0; i < n; i++) a = a * 0.9 + 0.1;
  return a;
}""", "needs the schemes of <enzyme/checkpoint.h>"),
}


@pytest.mark.parametrize("case", sorted(LOOP_ERRORS))
def test_checkpoint_loop_errors(tmp_path, case):
    body, message = LOOP_ERRORS[case]
    head = HEAD if case != "no_header" else \
        "void __enzyme_autodiff(void *, ...);\nextern int enzyme_dup;\n"
    main = ("int main(void) { double u[2] = {0.5, 0}, du[2] = {0};\n"
            "  __enzyme_autodiff((void *)f, enzyme_dup, u, du, 3L); return 0; }\n")
    src = tmp_path / "e.c"
    src.write_text(head + body + "\n" + main)
    r = subprocess.run(["enzyme-cc", "-std=c2x", "-O2", "-g", str(src), "-o", str(tmp_path / "e")],
                       capture_output=True, text=True)
    assert r.returncode != 0, r.stdout
    assert "enzyme-cc: error:" in r.stderr and message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "hint" in r.stderr and "e.c:" in r.stderr, r.stderr


def test_checkpoint_loop_throwing_call(tmp_path):
    """C++: a call in the annotated loop that may throw out of it is refused by name."""
    src = tmp_path / "t.cpp"
    src.write_text("""#include <enzyme/checkpoint.h>
extern "C" void __enzyme_autodiff(void *, ...);
extern "C" void __enzyme_ptr_size_hint(void *, long) noexcept;
extern int enzyme_dup;
struct Guard { ~Guard(); };
Guard::~Guard() { __asm__ volatile(""); }
__attribute__((noinline)) void grow(double *u) { if (u[0] > 1e9) throw 1; u[0] *= 1.5; }
double f(double *u, long n) {
  Guard g;
  __enzyme_ptr_size_hint(u, sizeof(double));
  [[enzyme::checkpoint("revolve", 2)]] for (long i = 0; i < n; i++) grow(u);
  return u[0];
}
int main() { double u[1] = {0.5}, du[1] = {0};
  __enzyme_autodiff((void *)f, enzyme_dup, u, du, 3L); }
""")
    r = subprocess.run(["enzyme-c++", "-O2", "-g", str(src), "-o", str(tmp_path / "t")],
                       capture_output=True, text=True)
    assert r.returncode != 0, r.stdout
    assert "a call in a loop marked for checkpointing may throw" in r.stderr, r.stderr
    assert "t.cpp:" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr, r.stderr


SAVE_STATE = r"""
#include <enzyme/checkpoint.h>
#include <string.h>
void __enzyme_autodiff(void *, ...);
void __enzyme_fwddiff(void *, ...);
typedef struct { double c[2]; } D2;
D2 __enzyme_autodiff_w2(void *, ...);
extern int enzyme_dup, enzyme_const, enzyme_width;
static double saved[64];
/* a scheme copying the state itself: env is {double *u, double *du, int64_t start} */
static void save(void *st, int64_t slot, int64_t step, void *env) {
  memcpy(saved + 2 * (slot + 2), *(double **)env, 2 * sizeof(double));
}
static void load(void *st, int64_t slot, int64_t step, void *env) {
  memcpy(*(double **)env, saved + 2 * (slot + 2), 2 * sizeof(double));
}
static void step(int64_t i, double *u) { u[0] = u[0] * u[1]; u[1] = u[1] + 0.1 * u[0]; }
static double f(double *u, int64_t n, const EnzymeCheckpointScheme *s) {
  EnzymeCkptConfig c = {0, 0, 0, 0, 0, 0};
  __enzyme_checkpoint_for((void *)step, 0, n, enzyme_scheme, s, &c,
                          enzyme_checkpoint_region, u, (int64_t)(2 * sizeof(double)), u);
  return u[0];
}
__attribute__((noinline)) static void g(double *u, double *du, const EnzymeCheckpointScheme *s) {
  __enzyme_autodiff((void *)f, enzyme_dup, u, du, enzyme_const, (int64_t)4, enzyme_const, s);
}
int main(int argc, char **argv) {
  EnzymeCheckpointScheme my = EnzymeCkptStoreAll;
  double u[2] = {0.5, 1.1}, v[2] = {1, 0}, du[2] = {0}, dv[2] = {0}, d1[2] = {0};
  my.save_state = save;
  my.load_state = load;
  if (argc > 1)
    __enzyme_fwddiff((void *)g, enzyme_dup, u, v, enzyme_dup, du, dv, enzyme_const, &my);
  else
    __enzyme_autodiff_w2((void *)f, enzyme_width, 2, enzyme_dup, u, du, d1, enzyme_const,
                         (int64_t)4, enzyme_const, &my);
  return 0;
}
"""


@pytest.mark.parametrize("mode", ["hvp", "vector"])
def test_checkpoint_save_state_scheme_refused(tmp_path, mode):
    """A scheme with its own save_state copies the state, not the tangents forward over reverse
    needs in the snapshots, nor the state before the loop a reverse sweep run again needs: the
    run stops with a message instead of a wrong derivative."""
    (tmp_path / "s.c").write_text(SAVE_STATE)
    run(["enzyme-cc", "-O2", "s.c", "-o", "prog"], cwd=tmp_path)
    r = run([str(tmp_path / "prog")] + (["hvp"] if mode == "hvp" else []), cwd=tmp_path,
            check=False)
    assert r.returncode != 0
    want = "forward mode over a checkpointed loop's gradient" if mode == "hvp" else \
        "cannot be rerun for a second reverse sweep"
    assert "enzyme checkpoint: a scheme with its own save_state" in r.stderr and want in r.stderr, \
        r.stderr
