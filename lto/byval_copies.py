"""By-value struct arguments made explicit copies before AD. A call passing `ptr byval(T) %p`
hands the callee its own copy of *%p (the code generator makes it), which the callee may change
(`Vec3 operator-(Vec3 a, const Vec3 &b) { return a -= b; }`). The derivatives of the callee
take plain pointers: called with %p, they would change the caller's object (a wrong gradient,
and the caller's data overwritten). So each such call to a function with bitcode gets a copy
of its own, made in the caller just before it (an entry-block alloca of T and a memcpy), which
AD sees and differentiates like any local; the call keeps byval, so the primal is unchanged
(the post-AD optimization removes the extra copy where it can)."""
from __future__ import annotations

from enzyme_cc.ir.inst import argument_groups, with_arguments
from enzyme_cc.ir.lexer import join, skip_balanced, tokenize, type_size
from enzyme_cc.ir.model import parse_module


def explicit_copies(text: str) -> str:
    """The module text with a copy per byval argument of calls to defined functions."""
    if "byval(" not in text:
        return text
    module = parse_module(text)
    lines = text.split("\n")
    before: dict[int, list[str]] = {}      # line -> lines inserted before it
    replaced: dict[int, str] = {}
    count = 0
    for name in list(module._bodies):
        span = module._bodies[name]
        if not any("byval(" in lines[k] for k in range(span[0] + 1, span[1])):
            continue
        fn = module.function(name)
        entry = fn.blocks[0].insts[0].line
        for inst in fn.insts():
            if inst.op not in ("call", "invoke") or not (inst.callee or "").startswith("@") or \
                    not module.defines(inst.callee) or "byval" not in inst.toks or \
                    "musttail" in inst.toks:      # (which must pass the caller's own copy)
                continue
            toks = tokenize(lines[inst.line])
            call = argument_groups(toks, inst.callee)
            if call is None:
                continue
            groups = call[2]
            changed = False
            for g in groups:
                if "byval" not in g or not g[-1].startswith(("%", "@")):
                    continue
                b = g.index("byval")
                ty = join(g[b + 2:skip_balanced(g, b + 1) - 1])
                size = type_size(ty, module.named_types)
                if not size:
                    continue
                align = g[g.index("align") + 1] if "align" in g else "8"
                count += 1
                copy = f"%ecc.byval.{count}"
                before.setdefault(entry, []).append(f"  {copy} = alloca {ty}, align {align}")
                before.setdefault(inst.line, []).append(
                    f"  call void @llvm.memcpy.p0.p0.i64(ptr align {align} {copy}, "
                    f"ptr align {align} {g[-1]}, i64 {size}, i1 false)")
                g[-1] = copy
                changed = True
            if changed:
                replaced[inst.line] = "  " + join(with_arguments(toks, call[0], call[1], groups))
    if not count:
        return text
    out = []
    for k, line in enumerate(lines):
        out += before.get(k, [])
        out.append(replaced.get(k, line))
    if "declare void @llvm.memcpy.p0.p0.i64(" not in text:
        out.append("declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)")
    return "\n".join(out)
