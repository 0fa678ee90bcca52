"""The IR model reads real clang-22 output and prints it back as IR that llvmlite accepts."""
import re
import subprocess

import llvmlite.binding as llvm
import pytest

from enzyme_cc.ir.model import parse_module
from enzyme_cc.ir.lexer import tokenize, type_size

C_SRC = r"""
#include <math.h>
#include <stdlib.h>
#include <string.h>
struct S { double a; double *p; float f[3]; };
double g(struct S *s) { return s->a * *s->p + s->f[1]; }
double loop(const double *x, int n) { double t = 0; for (int i = 0; i < n; i++) t += sin(x[i]) / (1 + x[i]); return t; }
int sw(int k) { switch (k) { case 0: return 3; case 1: return 7; case 5: return 9; default: return k; } }
void cp(double *d, const double *s, int n) { memcpy(d, s, n * sizeof(double)); }
"""
CXX_SRC = r"""
#include <vector>
#include <cmath>
double f(const double *x, int n) { std::vector<double> v(x, x + n); double s = 0; for (auto e : v) s += std::exp(e); return s; }
"""


def _ir(src, lang, flags):
    cmd = ["clang-22", "-x", lang, "-S", "-emit-llvm", "-o", "-", "-"] + flags
    return subprocess.run(cmd, input=src, capture_output=True, text=True, check=True).stdout


def _function_text(fn):
    lines = [fn.header]
    for b in fn.blocks:
        lines.append(b.label[1:] + ":")
        lines += ["  " + str(i) for i in b.insts]
    lines.append("}")
    return "\n".join(lines)


@pytest.mark.parametrize("src,lang", [(C_SRC, "c"), (CXX_SRC, "c++")])
@pytest.mark.parametrize("flags", [["-O0"], ["-O2"], ["-O2", "-g"], ["-O3", "-fno-exceptions"]])
def test_round_trip(src, lang, flags):
    text = _ir(src, lang, flags)
    m = parse_module(text)
    assert m._bodies
    # replace every definition by its re-printed model; the module must parse and verify
    lines = text.split("\n")
    for name, (start, end) in sorted(m._bodies.items(), key=lambda kv: -kv[1][0]):
        fn = m.function(name)
        assert fn.blocks and all(b.insts and b.term.is_terminator for b in fn.blocks)
        lines[start:end] = _function_text(fn).split("\n")
    mod = llvm.parse_assembly("\n".join(lines), llvm.create_context())
    mod.verify()


def test_operands_and_types():
    m = parse_module(_ir(C_SRC, "c", ["-O2"]))
    g = m.function("@g")
    ops = [i.op for i in g.insts()]
    assert "load" in ops and g.ret_ty == "double" and g.params[0].ty == "ptr"
    load = next(i for i in g.insts() if i.op == "load")
    assert load.ty == "double" and load.ops[0].ty == "ptr" and "!tbaa" in load.md
    cp = m.function("@cp")
    mc = next(i for i in cp.insts() if i.op == "call")
    assert mc.callee.startswith("@llvm.memcpy") and [o.ty for o in mc.ops] == ["ptr", "ptr", "i64", "i1"]
    sw = m.function("@sw")
    assert any(i.op == "switch" for i in sw.insts()) or len(sw.blocks) >= 1


def test_lexer_and_sizes():
    assert tokenize('%x = fadd fast double %a, 1.0e+00 ; comment') == \
        ["%x", "=", "fadd", "fast", "double", "%a", ",", "1.0e+00"]
    assert type_size("{ double , ptr , [ 3 x float ] }") == 32
    assert type_size("< 2 x double >") == 16


def test_lexer_comments_strings_and_errors():
    """The tokenizer scans a line in one regex pass: a `;` starts a comment only outside
    strings and quoted names, and a character no token starts with is an error naming where
    (as the token-by-token scan it replaced said), also in a line that is not ASCII."""
    assert tokenize('call void @"a;b"(ptr c"x;y\\00") ; note "z"') == \
        ["call", "void", '@"a;b"', "(", "ptr", 'c"x;y\\00"', ")"]
    assert tokenize("; a whole-line comment") == []
    assert tokenize('  %"é" = load double, ptr %p') == ['%"é"', "=", "load", "double", ",",
                                                       "ptr", "%p"]
    for line, near in [("%x = add i32 %a, ^1", "^1"), ("store i8 é, ptr %p", "é, ptr"),
                       ("%y = - 3", "- 3")]:
        with pytest.raises(ValueError, match=re.escape(f"cannot tokenize IR near: '{near}")):
            tokenize(line)


def test_packed_struct_type_of_a_global():
    """rustc's vtables are packed-struct constants: the type reads as `<{ ... }>` (its size
    was an internal error, 'unknown type size: i8 ] }')."""
    from enzyme_cc.ir.lexer import parse_type
    toks = tokenize('@vt = private unnamed_addr constant <{ [24 x i8], ptr, ptr }> '
                    '<{ [24 x i8] c"ab", ptr @f, ptr @g }>, align 8')
    ty, _ = parse_type(toks, toks.index("constant") + 1)
    assert ty.startswith("<{") and ty.endswith("}>")
    assert type_size(ty) == 40


def test_block_named_cleanup_beside_landingpad_clauses():
    """A block labelled `cleanup:` (a C label, which -fsanitize=address keeps) is a block, not a
    landingpad's `cleanup` clause continuing the previous line (an internal error before)."""
    m = parse_module("""
declare i32 @__gxx_personality_v0(...)
declare void @g()
define void @f(i1 %c) personality ptr @__gxx_personality_v0 {
entry:
  br i1 %c, label %cleanup, label %call
call:
  invoke void @g()
          to label %cleanup unwind label %lp
lp:
  %x = landingpad { ptr, i32 }
          cleanup
  resume { ptr, i32 } %x
cleanup:
  ret void
}
""")
    fn = m.function("@f")
    assert [b.label for b in fn.blocks] == ["%entry", "%call", "%lp", "%cleanup"]
    assert fn.blocks[2].insts[0].op == "landingpad" and len(fn.blocks[2].insts) == 2
    assert [p.label for p in fn.blocks[3].preds] == ["%entry", "%call"]


def test_record_kind_from_tbaa_members_without_an_ir_type():
    """A C++ class whose IR type the optimizer left out of the module (every access a byte
    offset from `this`): the kind of a byte of its char array member comes from the members its
    TBAA struct node lists (PENNANT's Hydro::msgdtrec beside the double dtrec); a piece of a
    double member stays a double's, and a nested record's member is found through it."""
    from enzyme_cc.ad.structure.tbaa_records import record_kind
    m = parse_module("""
define void @f(ptr %this, ptr %out) {
  %d = getelementptr inbounds i8, ptr %this, i64 8
  %v = load double, ptr %d, align 8, !tbaa !5
  %c = getelementptr inbounds i8, ptr %this, i64 17
  %b = load i8, ptr %c, align 1, !tbaa !6
  %e = getelementptr inbounds i8, ptr %this, i64 12
  %f = getelementptr inbounds i8, ptr %this, i64 64
  ret void
}
!0 = !{!"omnipotent char", !1, i64 0}
!1 = !{!"Simple C++ TBAA"}
!2 = !{!"double", !0, i64 0}
!3 = !{!"_ZTS5Inner", !2, i64 0, !7, i64 8}
!4 = !{!"_ZTS5Hydro", !7, i64 0, !2, i64 8, !0, i64 16, !3, i64 56}
!5 = !{!4, !2, i64 8}
!6 = !{!0, !0, i64 0}
!7 = !{!"int", !0, i64 0}
""")
    fn = m.function("@f")
    assert record_kind(m, fn, "%c", 1) == "int"         # a byte of the char array at 16
    assert record_kind(m, fn, "%e", 4) == "double"      # the second half of the double at 8
    assert record_kind(m, fn, "%f", 4) == "int"         # Inner's int, at 56 + 8
