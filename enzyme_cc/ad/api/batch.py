"""Enzyme's batch mode: `__enzyme_batch(f, enzyme_width, N, args...)` runs f on N inputs.

Each parameter of f takes `enzyme_vector, x_1, ..., x_N` (one value per lane; the default when
no tag is given) or `enzyme_scalar, s` (one value shared by every lane). The call returns the N
results of f packed lane by lane into its declared return type (a struct, array or vector of N
values; sret when the ABI returns it in memory), nothing when f returns void.

It is lowered before AD (`lower`, like ad/api/fixed_point.py) into a call of a generated function
`@__enzyme_cc_batch.K` that calls f once per lane and packs the results. The lanes are plain
calls of f next to each other: after inlining they sit side by side for LLVM's SLP vectorizer,
and a batched function is an ordinary function to differentiate (its lanes' marker calls, e.g.
an `__enzyme_fwddiff` inside f, are rewritten by the rounds that follow).
"""
from __future__ import annotations

import re

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import is_fp, parse_type
from . import marker_values
from ..structure.diagnostics import located
from .marker_values import _convert, _extract, _insert, _leaves
from .marker_args import _marker_of, constant_width
from enzyme_cc.ir.model import parse_module

PREFIX = "@__enzyme_cc_batch."
_CALL = re.compile(r"@\"?[\w.$]*__enzyme_batch[\w.$]*\"?\(")
_TAGS = ("enzyme_width", "enzyme_vector", "enzyme_scalar")
_HINT = ("call __enzyme_batch((void *)f, enzyme_width, N, [enzyme_vector,] x_1, ..., x_N, "
         "enzyme_scalar, s, ...) with one enzyme_vector group or enzyme_scalar value per parameter "
         "of f")


def _tag(fn, value: str) -> str | None:
    return _marker_of(fn, value, _TAGS)


def lower(text: str) -> str:
    """Rewrite every __enzyme_batch call into a call of its generated lane function."""
    if not _CALL.search(text):
        return text
    module = parse_module(text)
    marker_values._NAMED.clear()
    marker_values._NAMED.update(module.named_types)
    lines, extra, count = list(module._lines), [], 0
    for name, (start, end) in list(module._bodies.items()):
        if not _CALL.search("\n".join(module._lines[start:end])):
            continue
        fn = module.function(name)
        for inst in list(fn.insts()):
            if inst.op not in ("call", "invoke") or "__enzyme_batch" not in (inst.callee or ""):
                continue
            where = located(module, fn, inst)
            if inst.op == "invoke":
                raise UserError(f"{where}: __enzyme_batch in a try block is not supported; hint: "
                                "call it from a function without exception handlers")
            count += 1
            call, define = _lane_function(module, fn, inst, count, where)
            extra.append(define)
            lines[inst.line] = call
            for k in range(inst.line + 1, inst.line_end + 1):
                lines[k] = ""
    return "\n".join(lines) + "\n" + "\n".join(extra) + "\n"


def _lane_args(fn, target, ops, width, where, count):
    """Per lane, the (type, value) of each of f's parameters; the pre-instructions converting
    values passed through `...` to the parameter types are in `pre`."""
    lanes = [[] for _ in range(width)]
    pre, k = [], 0
    counter = [0]

    def tmp():
        counter[0] += 1
        return f"%ad.bc{count}.{counter[0]}"
    for j, p in enumerate(target.params):
        tag = _tag(fn, ops[k].value) if k < len(ops) else None
        if tag == "enzyme_width":
            raise UserError(f"{where}: enzyme_width must come right after the function; hint: {_HINT}")
        if tag:
            k += 1
        n = 1 if tag == "enzyme_scalar" else width
        vals = ops[k:k + n]
        if len(vals) < n:
            raise UserError(f"{where}: too few arguments for parameter {j + 1} of "
                            f"'{target.name[1:]}' ({'one shared value' if n == 1 else f'{n} lanes'} "
                            f"needed, {len(vals)} left); hint: {_HINT}")
        for v in vals:
            if _tag(fn, v.value):
                raise UserError(f"{where}: parameter {j + 1} of '{target.name[1:]}' needs "
                                f"{n} value(s) before the next marker; hint: {_HINT}")
        k += n
        conv = []
        for v in vals:
            if v.ty == p.ty:
                conv.append(v.value)
                continue
            try:
                conv.append(_convert(pre, tmp, v.value, v.ty, p.ty))
            except UserError:
                raise UserError(f"{where}: parameter {j + 1} of '{target.name[1:]}' has type "
                                f"{p.ty}, but __enzyme_batch passes {v.ty}") from None
        for lane in range(width):
            lanes[lane].append((p.ty, conv[lane] if n > 1 else conv[0]))
    if k != len(ops):
        raise UserError(f"{where}: too many arguments to __enzyme_batch for '{target.name[1:]}' "
                        f"({len(target.params)} parameter(s), width {width}); hint: {_HINT}")
    return lanes, pre


def _lane_function(module, fn, inst, count, where):
    ops = list(inst.ops)
    sret = None
    if "sret" in inst.toks:
        k = inst.toks.index("sret")
        sret = (parse_type(inst.toks, k + 2)[0], ops[0].value)
        ops = ops[1:]
    if not ops or not ops[0].value.startswith("@") or module.function(ops[0].value) is None:
        raise UserError(f"{where}: the first argument of __enzyme_batch must be a function with "
                        f"bitcode known at compile time; hint: {_HINT}")
    target = module.function(ops[0].value)
    if any(p.ty == "..." for p in target.params):
        raise UserError(f"{where}: cannot batch the variadic function '{target.name[1:]}'")
    if any(a.startswith(("sret", "byval", "inalloca", "preallocated")) for p in target.params
           for a in p.attrs):
        raise UserError(f"{where}: '{target.name[1:]}' passes a struct in memory (byval/sret), "
                        "which __enzyme_batch does not support yet; hint: pass pointers")
    if len(ops) < 3 or _tag(fn, ops[1].value) != "enzyme_width":
        raise UserError(f"{where}: __enzyme_batch needs enzyme_width, N after the function; "
                        f"hint: {_HINT}")
    width = constant_width(ops, where)
    lanes, pre = _lane_args(fn, target, ops[3:], width, where, count)
    fret = target.ret_ty
    want = sret[0] if sret else inst.ty
    slots = _leaves(module.named_types.get(want, want)) if want != "void" else []
    leaves = _leaves(fret) if fret != "void" else []
    used = bool(sret) or bool(inst.name)
    if fret != "void" and used and len(slots) != width * len(leaves):
        raise UserError(f"{where}: __enzyme_batch is declared to return {want} ({len(slots)} "
                        f"value(s)), but {width} lanes of '{target.name[1:]}' return "
                        f"{width * len(leaves)} value(s) of type {fret}; hint: declare it to return "
                        f"a struct or array of {width} {fret}")
    # the lane function: f once per lane, the results packed into `want`
    counter = [0]

    def tmp():
        counter[0] += 1
        return f"%t{counter[0]}"
    params = [(ty, f"%p{i}") for i, (ty, _) in enumerate(a for lane in lanes for a in lane)]
    body, vals, i = [], [], 0
    for lane in lanes:
        args = ", ".join(f"{ty} {params[i + j][1]}" for j, (ty, _) in enumerate(lane))
        i += len(lane)
        if fret == "void":
            body.append(f"call void {target.name}({args})")
            continue
        r = tmp()
        body.append(f"{r} = call {fret} {target.name}({args})")
        vals += [(_extract(body, tmp, fret, r, path), t) for path, t in leaves]
    rty = want if (fret != "void" and used) else "void"
    if rty == "void":
        body.append("ret void")
    else:
        acc = "zeroinitializer" if slots[0][0] else None
        for (path, sty), (v, vty) in zip(slots, vals):
            v = _convert(body, tmp, v, vty, sty)
            acc = v if not path else _insert(body, tmp, want, acc, path, sty, v)
        body.append(f"ret {rty} {acc}")
    name = f"{PREFIX}{count}"
    define = "\n".join([f"define internal {rty} {name}("
                        + ", ".join(f"{t} {v}" for t, v in params) + ") {", "entry:"]
                       + ["  " + b for b in body] + ["}"])
    dbg = f", !dbg {inst.md['!dbg']}" if inst.md.get("!dbg") else ""
    cargs = ", ".join(f"{t} {v}" for lane in lanes for t, v in lane)
    out = list(pre)
    if rty == "void":
        out.append(f"call void {name}({cargs}){dbg}")
        if inst.name:      # f returns nothing: the declared result is zero
            zero = "0.0" if is_fp(inst.ty) else "zeroinitializer"
            out.append(f"{inst.name} = {marker_values._identity(inst.ty, zero)}")
    elif sret:
        res = f"%ad.bres.{count}"
        out += [f"{res} = call {rty} {name}({cargs}){dbg}", f"store {rty} {res}, ptr {sret[1]}"]
    else:
        out.append(f"{inst.name} = call {rty} {name}({cargs}){dbg}")
    return "\n".join(out), define
