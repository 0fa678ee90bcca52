"""Code AD cannot reach compiled apart from the AD module (lto/carve.py): what moves, what stays
for AD's module-wide scans, and a program whose unreached part moves (the threshold lowered:
the real one is a library's megabyte of IR, every Rust program's standard library, which
tests/test_rust.py links)."""
import re
import subprocess

import pytest

from enzyme_cc.lto import carve

MODULE = """
$dup = comdat any
@shared_text = private unnamed_addr constant [3 x i8] c"ab\\00"
@written = internal global double 0.0
@only_moved = internal global double 0.0
@table = internal global ptr null
define internal double @reached(double %x) {
  %t = load double, ptr @written
  %s = getelementptr i8, ptr @shared_text, i64 1
  %y = fmul double %x, %t
  ret double %y
}
define internal void @calls_reached(double %x) #0 {
  %y = call double @reached(double %x)
  call void @moves_too(double %y)
  ret void
}
define internal void @moves_too(double %x) #0 {
  %a = load double, ptr @only_moved
  %b = fadd double %a, %x
  store double %b, ptr @only_moved
  %s = getelementptr i8, ptr @shared_text, i64 0
  ret void
}
define internal void @takes_address() #0 {
  store ptr @reached, ptr @table
  ret void
}
define internal void @writes_what_reached_reads() #0 {
  store double 1.0, ptr @written
  ret void
}
define linkonce_odr void @dup() #0 comdat {
  ret void
}
define void @entry(double %x) #0 {
  call void @calls_reached(double %x)
  call void @takes_address()
  call void @writes_what_reached_reads()
  call void @dup()
  ret void
}
attributes #0 = { nounwind "enzyme-cc-unreached" }
"""


def test_what_moves_and_what_stays(monkeypatch):
    """Moves: unreached functions calling reached code or each other, and the variable only they
    name. Stays: the function taking a reached function's address (an indirect call's target
    AD would no longer see), the one writing a variable reached code reads, the comdat member.
    Promoted (named across the modules): the reached local the moved code calls and the
    constant both name."""
    monkeypatch.setattr(carve, "CARVE_BYTES", 1)
    choice = carve.choose(MODULE)
    assert choice.functions == {"calls_reached", "moves_too", "entry"}
    assert choice.variables == {"only_moved"}
    assert choice.promoted == {"reached", "shared_text", "takes_address",
                               "writes_what_reached_reads"}


def test_small_unreached_code_stays():
    assert carve.choose(MODULE) is None          # (below CARVE_BYTES)


PROGRAM = r"""
#include <stdio.h>
static double table[8];
static double log_acc;
__attribute__((noinline)) static double sq(double x) { return x * x; }
double f(double x) {
  double s = 0;
  for (int i = 0; i < 8; i++) s += table[i] * sq(x + i);
  return s;
}
/* writes what f reads: stays in the AD module */
__attribute__((noinline)) static void init(void) { for (int i = 0; i < 8; i++) table[i] = 1.0 + i; }
/* moves, with log_acc */
__attribute__((noinline)) static void note(double v) { log_acc += v; }
/* moves: calls the reached sq */
__attribute__((noinline)) static double lib(int k, double v) { note(v); return sq(v) + k; }
/* takes sq's address: stays */
__attribute__((noinline)) static double (*pick(void))(double) { return sq; }
double __enzyme_autodiff(void *, ...);
__attribute__((noinline)) static double gradient(double x) {
  return __enzyme_autodiff((void *)f, x);
}
int main(void) {
  init();
  double d = gradient(0.5), t = 0;
  for (int k = 0; k < 5; k++) t += lib(k, 0.1 * k);
  printf("%.9f %.6f %.6f %.3f\n", d, t, log_acc, pick()(3.0));
  return 0;
}
"""


@pytest.mark.parametrize("cache", ["0", "1"])
def test_program_with_code_compiled_apart(tmp_path, monkeypatch, capfd, cache):
    """The whole link with the threshold lowered: the -v stage is there, the moved functions
    are not defined in the module AD sees, and the program's gradient and its other output
    are right (with the cache, twice: the second link takes the moved code's object from it)."""
    from enzyme_cc import cli
    monkeypatch.setattr(carve, "CARVE_BYTES", 1)
    monkeypatch.setenv("ENZYME_CC_CACHE", cache)
    monkeypatch.setenv("ENZYME_CC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ENZYME_CC_DUMP_DIR", str(tmp_path / "dump"))
    src = tmp_path / "apart.c"
    src.write_text(PROGRAM)
    subprocess.run(["enzyme-cc", "-O2", "-c", str(src), "-o", str(tmp_path / "apart.o")],
                   check=True)
    want = sum(2 * (1.0 + i) * (0.5 + i) for i in range(8))
    for _ in range(2 if cache == "1" else 1):
        assert cli._main("clang", ["-v", "-O2", str(tmp_path / "apart.o"), "-lm", "-o",
                                   str(tmp_path / "apart")]) == 0
        err = capfd.readouterr().err
        assert "code AD cannot reach, compiled apart" in err, err[-2000:]
        out = subprocess.run([str(tmp_path / "apart")], capture_output=True, text=True,
                             check=True).stdout.split()
        assert abs(float(out[0]) - want) < 1e-9 * want, out
        assert out[1:] == [f"{sum(0.01 * k * k + k for k in range(5)):.6f}",
                           f"{sum(0.1 * k for k in range(5)):.6f}", "9.000"], out
        if cache == "1":
            (tmp_path / "apart").unlink()
            for entry in (tmp_path / "cache" / "link").glob("ad-*"):
                entry.unlink()              # (the AD object itself is made again)
    before = (tmp_path / "dump" / "before-ad.ll").read_text()
    defined = set(re.findall(r"^define [^@]*@([\w.]+)\(", before, re.M))
    assert not {"main", "lib", "note"} & defined, defined
    assert {"init", "pick"} <= {re.sub(r"^__enzyme_cc_u\.", "", d) for d in defined}, defined


def test_moved_functions_lose_the_pre_ad_tag():
    """The pre-AD scope tags code AD cannot reach `noinline optnone` for the pre-AD pipeline,
    which the moved code never goes through: its functions get a copy of their attribute
    group without the tag (else they would be compiled unoptimized); the rest keep it."""
    from enzyme_cc.lto import preopt_scope
    group = '{ nounwind noinline optnone "enzyme-cc-later" "enzyme-cc-unreached" }'
    text = ("define void @moved() #0 {\n  ret void\n}\n"
            "define void @kept() #0 {\n  ret void\n}\n"
            f"attributes #0 = {group}\n")
    out = preopt_scope.untag(text, {"moved"})
    assert "define void @kept() #0 {" in out and f"attributes #0 = {group}" in out
    new = re.search(r"define void @moved\(\) #(\d+) \{", out).group(1)
    assert new != "0"
    attrs = re.search(rf"^attributes #{new} = \{{(.*)\}}$", out, re.M).group(1)
    assert attrs.split() == ["nounwind", '"enzyme-cc-unreached"'], attrs
