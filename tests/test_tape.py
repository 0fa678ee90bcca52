"""The tape position in SSA (enzyme_cc/ad/tape/tape_local.py) and the per-loop reservation's safety
net (enzyme_cc/ad/plan/tape_reserve.py). The derivatives themselves are checked by the corpus
(tests/ad_programs/tape_reserve.c and every program that tapes)."""
import shutil
import subprocess

import pytest

from enzyme_cc.ad.tape import tape_local
from enzyme_cc.ad.tape.tape import TAPE

AUG = """define internal double @aug(ptr %x, ptr %ad.tape) {
entry:
  %p = call ptr @__enzyme_cc_push(ptr %ad.tape, i64 8)
  store double 1.0, ptr %p, align 1
  call void @callee(ptr %x, ptr %ad.tape)
  call void @other(ptr %x)
  %q = call ptr @__enzyme_cc_pop(ptr %ad.tape, i64 8)
  ret double 0.0
}"""


def test_local_copy_synced_around_calls_given_the_header():
    out = tape_local.lower(AUG).split("\n")
    get = "  call void @__enzyme_cc_tape_get(ptr %ad.tl0, ptr %ad.tape)"
    put = "  call void @__enzyme_cc_tape_put(ptr %ad.tape, ptr %ad.tl0)"
    assert out[2] == "  %ad.tl0 = alloca { ptr, i64, i64 }, align 8" and out[3] == get
    assert "@__enzyme_cc_lpush(ptr %ad.tape, ptr %ad.tl0, i64 8)" in out[4]
    k = out.index("  call void @callee(ptr %x, ptr %ad.tape)")
    assert out[k - 1] == put and out[k + 1] == get      # the callee pushes on the header
    k = out.index("  call void @other(ptr %x)")
    assert out[k - 1] != put and out[k + 1] != get      # not given the header: no sync
    assert "@__enzyme_cc_pop(ptr %ad.tl0, i64 8)" in out[k + 1]
    assert out[-3] == put and out[-2].strip() == "ret double 0.0"   # the caller reads top


UNUSED = """define internal { double } @diffe.sq(double %v0) {
entry:
  %ad.tape = alloca { ptr, i64, i64, ptr }
  call void @__enzyme_cc_tape_start(ptr %ad.tape)
  %d = fmul double %v0, 2.0
  call void @__enzyme_cc_tape_end(ptr %ad.tape)
  %r = insertvalue { double } undef, double %d, 0
  ret { double } %r
}"""


def test_unused_header_dropped():
    """A gradient that keeps nothing for its reverse starts and ends no tape (the spare buffer's
    atomic exchange and tape_end's call cost more than a small derivative)."""
    out = tape_local.lower(UNUSED)
    assert "tape_start" not in out and "tape_end" not in out and "alloca" not in out
    assert "%d = fmul double %v0, 2.0" in out


def test_used_header_kept():
    for use in ("  %p = call ptr @__enzyme_cc_push(ptr %ad.tape, i64 8)",
                "  call void @__enzyme_cc_defer_free(ptr %ad.tape, ptr %v0, ptr null, ptr null)",
                "  call void @aug.f(double %v0, ptr %ad.tape)"):
        text = UNUSED.replace("  %d = fmul", use + "\n  %d = fmul")
        out = tape_local.lower(text)
        assert "@__enzyme_cc_tape_start(ptr %ad.tape)" in out and \
            "@__enzyme_cc_tape_end(ptr %ad.tape)" in out, use


def test_header_read_directly_keeps_the_helpers():
    text = AUG.replace("  ret double 0.0", "  %t = getelementptr i8, ptr %ad.tape, i64 8\n"
                       "  %top = load i64, ptr %t\n  ret double 0.0")
    assert tape_local.lower(text) == text


@pytest.mark.skipif(shutil.which("clang-22") is None, reason="clang-22 is not installed")
def test_reservation_overrun_aborts(tmp_path):
    """A loop that pushes more than it reserved stops with an internal error, never silently."""
    main = """
@stderr = external global ptr
declare i32 @fputs(ptr, ptr)
declare void @abort()
declare i64 @write(i32, ptr, i64)
declare ptr @realloc(ptr, i64)
declare void @free(ptr)
declare ptr @malloc(i64)
declare i64 @llvm.umax.i64(i64, i64)
declare i64 @llvm.uadd.sat.i64(i64, i64)
define i32 @main() {
entry:
  %t = alloca { ptr, i64, i64, ptr }
  call void @__enzyme_cc_tape_start(ptr %t)
  %end = call i64 @__enzyme_cc_reserve(ptr %t, i64 16)
  %a = call ptr @__enzyme_cc_push_nc(ptr %t, i64 16)
  call void @__enzyme_cc_reserve_check(ptr %t, i64 %end)
  %b = call ptr @__enzyme_cc_push_nc(ptr %t, i64 8)
  call void @__enzyme_cc_reserve_check(ptr %t, i64 %end)
  ret i32 0
}
"""
    src = tmp_path / "t.ll"
    src.write_text(TAPE + main)
    exe = tmp_path / "t"
    subprocess.run(["clang-22", "-O1", str(src), "-o", str(exe)], check=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True)
    assert r.returncode != 0
    assert "a loop pushed more onto the tape than its trip count said" in r.stderr


OOM_PROGRAM = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
double __enzyme_autodiff(void *, ...);
int enzyme_dup, enzyme_const;
double chain(const double *x, long n) {       /* every sin operand is taped: n doubles */
  double s = x[0];
  for (long i = 0; i < n; i++) s = sin(s) + 0.5e-3 * s * s;
  return s;
}
int main(int argc, char **argv) {
  double x = 0.3, dx = 0;
  __enzyme_autodiff((void *)chain, enzyme_dup, &x, &dx, enzyme_const, atol(argv[1]));
  printf("%.17g\n", dx);
  return 0;
}
"""


@pytest.mark.skipif(shutil.which("clang-22") is None, reason="clang-22 is not installed")
def test_tape_out_of_memory_says_so(tmp_path):
    """A tape that cannot grow stops the program with a message, not a bare abort that looks
    like a crash of the user's code."""
    import os
    import resource
    import sys
    from pathlib import Path
    (tmp_path / "oom.c").write_text(OOM_PROGRAM)
    cc = str(Path(sys.executable).parent / "enzyme-cc")
    subprocess.run([cc, "-O2", "oom.c", "-o", "oom", "-lm"], cwd=tmp_path, check=True,
                   env=dict(os.environ, ENZYME_CC_CACHE="0"))
    ok = subprocess.run(["./oom", "1000"], cwd=tmp_path, capture_output=True, text=True)
    assert ok.returncode == 0 and abs(float(ok.stdout)) > 0, ok.stderr

    def limit():                        # 300 MB of address space: the 800 MB tape cannot grow
        resource.setrlimit(resource.RLIMIT_AS, (300 << 20, 300 << 20))
    r = subprocess.run(["./oom", "100000000"], cwd=tmp_path, capture_output=True, text=True,
                       preexec_fn=limit, timeout=120)
    assert r.returncode != 0
    assert "enzyme-cc: out of memory: a derivative's tape could not grow" in r.stderr, r.stderr



def _first_tape_bytes(tmp_path, program: str, folder="ad_programs", flags=()) -> int:
    """Bytes the first gradient of tests/`folder`/`program` pushes (built -O2 with
    ENZYME_CC_TAPE_STATS=1, run on one thread); the program's own checks must pass."""
    import os
    import sys
    from pathlib import Path
    src = Path(__file__).resolve().parent / folder / program
    exe = tmp_path / "prog"
    env = dict(os.environ, ENZYME_CC_TAPE_STATS="1", ENZYME_CC_CACHE="0", OMP_NUM_THREADS="1")
    cc = os.path.join(os.path.dirname(sys.executable), "enzyme-cc")
    subprocess.run([cc, "-O2", *flags, str(src), "-lm", "-o", str(exe)], check=True, env=env)
    r = subprocess.run([str(exe)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout
    first = r.stderr.splitlines()[0]
    assert first.startswith("enzyme-cc: tape: "), first
    return int(first.split()[2])


def test_restored_local_arrays_are_saved_once_per_call(tmp_path):
    """A helper reading the caller's local arrays in a loop (`mesh` in restored_local_arrays.c):
    its split pair saves the three 32-byte arrays once per call (ad/plan/restored_args.py) instead
    of taping each load per iteration: 880 bytes for the 5 calls' gradient, 2000 before."""
    assert _first_tape_bytes(tmp_path, "restored_local_arrays.c") <= 1000


def test_iteration_records_in_nested_loops(tmp_path):
    """Values read by the reverse of several blocks of one iteration of a loop nested in a
    time-step loop are pushed once by its latch (ad/plan/plan.py): 1372 bytes, 2524 when each block
    pushed its own copy."""
    assert _first_tape_bytes(tmp_path, "iteration_records_nested.c") <= 1600


def test_freed_scratch_keeps_read_only_inputs_reloadable(tmp_path):
    """A parallel region captures a scratch pointer by reference, and the pointer loaded back
    from that local is freed (tests/openmp_programs/omp_freed_scratch.c): the local's lifetime
    markers are no writes of unknown pointers into it, so the free does not stop the read-only
    analysis, and the constant inputs' loads are re-read: 1177 bytes of tape on one thread,
    3189 when every load was taped."""
    assert _first_tape_bytes(tmp_path, "omp_freed_scratch.c", "openmp_programs",
                             ("-fopenmp",)) <= 2000


def test_split_pairs_reread_their_own_blocks(tmp_path):
    """Scratch blocks a split pair allocates and never lets out of the call
    (tests/ad_programs/split_private_blocks.c) are re-read by its reverse function where no
    later write of the call reaches them (ad/analysis/memory.py, private_block), or where the reverse
    function has undone the loop stores after them (ad/synthesis/undo_stores.py): 9028 bytes of tape for
    the gradient, 11204 when every load was taped."""
    assert _first_tape_bytes(tmp_path, "split_private_blocks.c") <= 9600


def test_values_hoisted_into_a_guarded_preheader_are_pushed_once_per_loop(tmp_path):
    """Pointers LLVM hoisted into a rotated loop's preheader (tests/ad_programs/
    hoist_bypassed_exit.c) are pushed once per run of the loop, by the exit block the guard
    also skips to (ad/plan/plan.py): 1322 bytes, 1498 when every iteration pushed them."""
    assert _first_tape_bytes(tmp_path, "hoist_bypassed_exit.c") <= 1400


def test_tape_sites_report(tmp_path):
    """ENZYME_CC_TAPE_STATS=sites (ad/tape/tape_sites.py): after the tape's totals, every push site
    (a generated function and the primal block it pushes from) with at least 1 % of the bytes,
    whose counts add up to no more than the totals; the program's checks still pass."""
    import os
    import re
    import sys
    from pathlib import Path
    src = Path(__file__).resolve().parent / "ad_programs" / "split_private_blocks.c"
    env = dict(os.environ, ENZYME_CC_TAPE_STATS="sites", ENZYME_CC_CACHE="0")
    cc = os.path.join(os.path.dirname(sys.executable), "enzyme-cc")
    subprocess.run([cc, "-O2", str(src), "-lm", "-o", str(tmp_path / "prog")], check=True, env=env)
    r = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout
    lines = r.stderr.splitlines()
    total = re.match(r"enzyme-cc: tape: (\d+) bytes in (\d+) pushes", lines[0])
    assert total, r.stderr
    sites = []
    for line in lines[1:]:
        if line.startswith("enzyme-cc: tape: "):
            break                                   # the forward-mode call's own report
        m = re.match(r"enzyme-cc: tape site (\S+) (%\S+): (\d+) bytes in (\d+) pushes$", line)
        assert m, line
        sites.append((m.group(1), m.group(2), int(m.group(3)), int(m.group(4))))
    names = {fn.split(".")[1] for fn, _, _, _ in sites}
    assert {"phase", "rewritten", "gathered"} <= names, sites
    assert all(fn.startswith(("aug.", "diffe.run.")) and 100 * b >= int(total.group(1))
               for fn, _, b, _ in sites)
    assert sum(b for _, _, b, _ in sites) <= int(total.group(1))
    assert sum(n for _, _, _, n in sites) <= int(total.group(2))


def test_pair_differences_taped_instead_of_positions(tmp_path):
    """A force loop whose stores may overwrite the positions (pair_forces_through_struct.c) tapes
    each pair's three differences instead of the six positions they come from
    (ad/plan/value_plan.py `_cheaper_taped`): 15365 bytes, 23789 before."""
    assert _first_tape_bytes(tmp_path, "pair_forces_through_struct.c") <= 19000


def test_restrict_kernel_inlined_rereads_its_inputs(tmp_path):
    """A matrix product with `restrict` parameters inlined into the differentiated function
    (restrict_kernels_inlined.c): the scoped no-alias metadata says its stores into C miss A
    and B (ad/structure/alias_scopes.py), so the reverse re-reads them: 336 bytes of tape,
    616 before."""
    assert _first_tape_bytes(tmp_path, "restrict_kernels_inlined.c") <= 450


def test_mode_sums_taped_instead_of_the_velocities(tmp_path):
    """An element loop whose reverse needs combinations of four mode sums of eight velocities
    that the node update overwrites (mode_sums_taped.c) tapes the four modes per element and
    component, not the eight velocities: a minimum cut between what the reverse cannot recompute
    and what it needs (ad/plan/tape_cut.py): 18496 bytes, 26176 before."""
    assert _first_tape_bytes(tmp_path, "mode_sums_taped.c") <= 21000


def test_narrow_exit_counts_are_computed(tmp_path):
    """Inner loops over an int index from a run-time start whose exit test compares the
    truncation of the widened index with the bound (narrow_exit_counts.c): the reverse enters
    each at its last iteration computed modulo 2^32 from the start and the bound
    (ad/structure/exit_count.py), instead of a pushed exit count per entry: 2880 bytes, 2976
    before (12 loop entries)."""
    assert _first_tape_bytes(tmp_path, "narrow_exit_counts.c") <= 2900


def _chain_program(length: int) -> str:
    """A loop body of `length` values, each made from the two before it and a load of memory the
    loop overwrites later (leaves the reverse tapes): one group of the tape cut far larger than
    tape_cut.MAX_GROUP. main checks the gradient against central differences."""
    body = "\n".join(f"    double a{k} = a{k - 1} * u[i + {k % 4}] + a{k - 2} * 0.5;"
                     for k in range(2, length))
    return f"""#include <math.h>
#include <stdio.h>
extern int enzyme_dup, enzyme_const;
void __enzyme_autodiff(void *, ...);
__attribute__((noinline)) void sweep(double *u, int n) {{
  for (int i = 0; i < n; i++) {{
    double a0 = u[i], a1 = u[i + 1];
{body}
    u[i] = a{length - 1};
  }}
}}
static double f(const double *u0, int n) {{
  double u[16];
  for (int i = 0; i < 16; i++) u[i] = u0[i];
  sweep(u, n);
  double s = 0;
  for (int i = 0; i < 16; i++) s += u[i] * (i + 1);
  return s;
}}
int main(void) {{
  double u[16], du[16], h = 1e-6;
  int bad = 0;
  for (int i = 0; i < 16; i++) {{ u[i] = 0.3 + 0.02 * i; du[i] = i + 1; }}
  double v[16];
  for (int i = 0; i < 16; i++) v[i] = u[i];
  __enzyme_autodiff((void *)sweep, enzyme_dup, v, du, enzyme_const, 12);
  for (int i = 0; i < 16; i++) {{
    double keep = u[i];
    u[i] = keep + h; double up = f(u, 12);
    u[i] = keep - h; double down = f(u, 12);
    u[i] = keep;
    double fd = (up - down) / (2 * h);
    bad += fabs(du[i] - fd) > 1e-5 * (1 + fabs(fd));
    printf("du[%d] %.12g %.12g\\n", i, du[i], fd);
  }}
  return bad;
}}
"""


def test_large_cut_groups_are_walked_once(tmp_path, monkeypatch):
    """A group of the tape cut larger than MAX_GROUP is left to the per-value rule; it was
    walked again from each of its members (235 walks for this program's loop, more than half
    of LULESH's differentiate stage: 2.66 -> 1.45 s), now once per reverse block that asks (5
    walks, the same derivative). A walk that meets a member of a group already found too large
    stops there (its group is that one): the members judged fall 796 -> 320 here, 117,266 ->
    10,534 in LULESH's OpenMP build. The gradient matches central differences."""
    import os
    import sys
    from enzyme_cc.ad.plan import tape_cut
    from enzyme_cc.ad.synthesis.generate import differentiate
    (tmp_path / "chain.c").write_text(_chain_program(120))
    cc = os.path.join(os.path.dirname(sys.executable), "enzyme-cc")
    env = dict(os.environ, ENZYME_CC_DUMP_DIR=str(tmp_path / "dump"), ENZYME_CC_CACHE="0")
    subprocess.run([cc, "-O2", "chain.c", "-lm", "-o", "chain"], cwd=tmp_path, check=True,
                   env=env)
    r = subprocess.run(["./chain"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout
    walks, judged = [], []
    walk, member = tape_cut._group_cut, tape_cut._member
    monkeypatch.setattr(tape_cut, "_group_cut", lambda *a: walks.append(1) or walk(*a))
    monkeypatch.setattr(tape_cut, "_member", lambda *a: judged.append(1) or member(*a))
    differentiate((tmp_path / "dump" / "before-ad.ll").read_text(), set())
    assert 0 < len(walks) <= 20, len(walks)
    assert len(judged) <= 480, len(judged)
