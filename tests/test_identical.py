"""Generated functions with the same code merged after AD (ad/synthesis/identical.py); the
program's own functions are left alone."""
from enzyme_cc.ad.synthesis import identical
from enzyme_cc.lto import optimize

MODULE = """
define internal double @aug.f.1(double %x) !dbg !3 {
  %y = fmul double %x, %x, !dbg !5
  ret double %y
}
define internal double @aug.f.2(double %x) !dbg !4 {
  %y = fmul double %x, %x, !dbg !6
  ret double %y
}
define internal double @rev.g.3(double %x) {
  %y = call double @aug.f.1(double %x)
  ret double %y
}
define internal double @rev.g.4(double %x) {
  %y = call double @aug.f.2(double %x)
  ret double %y
}
define internal double @twin_a(double %x) {
  %y = fadd double %x, 1.0
  ret double %y
}
define internal double @twin_b(double %x) {
  %y = fadd double %x, 1.0
  ret double %y
}
@table = internal constant [4 x ptr] [ptr @rev.g.3, ptr @rev.g.4, ptr @twin_a, ptr @twin_b]
define ptr @entry() {
  ret ptr @table
}
!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!7}
!0 = distinct !DICompileUnit(language: DW_LANG_C99, file: !1, emissionKind: LineTablesOnly)
!1 = !DIFile(filename: "a.c", directory: "/")
!2 = !DISubroutineType(types: !{})
!3 = distinct !DISubprogram(name: "aug.f.1", scope: !1, file: !1, line: 1, type: !2, unit: !0, spFlags: DISPFlagDefinition)
!4 = distinct !DISubprogram(name: "aug.f.2", scope: !1, file: !1, line: 1, type: !2, unit: !0, spFlags: DISPFlagDefinition)
!5 = !DILocation(line: 2, scope: !3)
!6 = !DILocation(line: 2, scope: !4)
!7 = !{i32 2, !"Debug Info Version", i32 3}
"""


def test_identical_derivatives_merged_and_callers_after_them():
    """aug.f.2 equals aug.f.1 but for its name and locations: dropped; rev.g.4 then equals
    rev.g.3: dropped in the second round; the table names the ones kept. twin_b, the program's
    own function, stays though it equals twin_a."""
    text, dropped = identical.merge(MODULE)
    assert dropped == 2
    assert "@aug.f.2" not in text and "@rev.g.4" not in text
    assert "[ptr @rev.g.3, ptr @rev.g.3, ptr @twin_a, ptr @twin_b]" in text
    optimize.parse_text(text, optimize.new_context())      # (parses and verifies)


def test_nothing_to_merge():
    text = MODULE.replace("fmul double %x, %x, !dbg !6", "fadd double %x, %x, !dbg !6")
    assert identical.merge(text) == (text, 0)
