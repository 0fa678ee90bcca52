"""Rewriting a marker call into a call of its generated function: the arguments converted to the
generated function's parameter types, the results packed into the marker's declared return type
(scalars, structs, arrays, vectors, sret)."""
from __future__ import annotations

import re

from enzyme_cc.errors import UserError
from enzyme_cc.ir.lexer import is_fp, split_fields
from ..structure.diagnostics import located
from .marker_values import (TAPE_HEADER_BYTES, _BYTES, _convert, _extract, _identity, _insert,
                            _leaves, _pack, _store_bytes)
from .reverse_vector import split_tree

_CALL_LINE = re.compile(r"^\s*(%[-\w.$]+ = )?(tail |musttail |notail )?(call|invoke) ")


def with_marker_location(text: str, dbg: str | None) -> str:
    """The marker's source location on every call replacing it: a derivative inlined into a
    function with debug info brings the primal callees' locations with it, and without a call
    site location LLVM's inliner leaves them pointing at the wrong subprogram (a module that
    no longer verifies, with -g in the Ref pipeline)."""
    if not dbg:
        return text
    return "\n".join(f"{ln}, !dbg {dbg}" if _CALL_LINE.match(ln) and "!dbg" not in ln else ln
                     for ln in text.split("\n"))


def rewrite_vector_call(gen, req, name, rty) -> list[str]:
    """One call of the vector forward derivative; its N tangents packed into the result."""
    inst = req.inst
    lines = [line for _, _, pre in req.vector_args for line in pre]
    text = ", ".join(f"{ty} {v}" for ty, v, _ in req.vector_args)
    n = [0]

    def tmp():
        n[0] += 1
        return f"%ad.vp{req.line}.{n[0]}"
    vals = []                     # (value, type) of every scalar of the N tangents, lane by lane
    if rty == "void":
        lines.append(f"call void {name}({text})")
    else:
        res = f"%ad.vec{req.line}"
        lines.append(f"{res} = call {rty} {name}({text})")
        for path, sty in _leaves(rty):
            vals.append((_extract(lines, tmp, rty, res, path), sty))
    return _pack(gen, req, lines, tmp, vals, "tangents")




def rewrite_tape_size(gen, req) -> list[str]:
    """`__enzyme_augmentsize(f, ...)`: the bytes an enzyme_allocated tape needs."""
    inst = req.inst
    if not inst.name:
        return []
    if not inst.ty.startswith("i"):
        raise UserError(f"{located(gen.module, req.caller, inst)}: __enzyme_augmentsize "
                        f"must return an integer (size_t), declared as {inst.ty}")
    return [f"{inst.name} = add {inst.ty} 0, {TAPE_HEADER_BYTES}"]


def rewrite_split_call(gen, req, names) -> list[str]:
    """__enzyme_augmentfwd: run the augmented forward on a fresh tape, return the tape (and the
    primal result); __enzyme_reverse: run the reverse on that tape, free it, return adjoints."""
    aug, aug_ret, rev, rev_ret = names
    inst = req.inst
    lines, n = [], [0]

    def tmp():
        n[0] += 1
        return f"%ad.sp{req.line}.{n[0]}"
    args = []
    for pty, op in req.args:
        args.append(f"{pty} {_convert(lines, tmp, op.value, op.ty, pty) if op.ty != pty else op.value}")
    opts = getattr(req, "opts", {})
    if req.mode == "augment":
        if "tape" in opts:                  # enzyme_allocated: the header lives in the caller's buffer
            h = opts["tape"].value
        else:
            h = tmp()
            lines.append(f"{h} = call ptr @malloc(i64 {TAPE_HEADER_BYTES})")
            gen.declare_raw("@malloc", "declare ptr @malloc(i64)")
        lines.append(f"call void @__enzyme_cc_tape_start(ptr {h})")
        call = f"call {aug_ret} {aug}({', '.join(args + ['ptr ' + h])})"
        want = inst.ty
        if aug_ret == "void" or want in ("ptr", "i64") or not inst.name:
            lines.append(call if aug_ret == "void" else f"{tmp()} = {call}")
            if inst.name:
                lines.append(f"{inst.name} = ptrtoint ptr {h} to i64" if want == "i64" else
                             f"{inst.name} = getelementptr i8, ptr {h}, i64 0")
            return lines
        r = tmp()
        lines.append(f"{r} = {call}")
        prim = r
        if aug_ret.startswith("{"):
            prim = tmp()
            lines.append(f"{prim} = extractvalue {aug_ret} {r}, 0")
        fields = split_fields(gen.module.named_types.get(want, want))
        # {tape, primal} or Enzyme's {primal, tape}: the pointer field is the tape (two pointer
        # fields: the tape comes first); rustc returns a #[repr(C)] {*mut c_void, f64} as
        # {i64, double} (the pointer classified as an integer)
        tapes = ("ptr", "i64")
        at = 1 if len(fields) == 2 and fields[1] in tapes and fields[0] not in tapes else 0
        if fields[at] not in tapes:
            raise UserError(f"{located(gen.module, req.caller, inst)}: __enzyme_augmentfwd returns "
                            f"{want}: its tape field must be a pointer (void*), found {fields[at]}")
        tape = h
        if fields[at] == "i64":
            tape = tmp()
            lines.append(f"{tape} = ptrtoint ptr {h} to i64")
        a = tmp()
        lines.append(f"{a} = insertvalue {want} poison, {fields[at]} {tape}, {at}")
        if len(fields) > 1:
            pt = gen.module.function(req.fn).ret_ty
            lines.append(f"{inst.name} = insertvalue {want} {a}, {fields[1 - at]} "
                         f"{_convert(lines, tmp, prim, pt, fields[1 - at])}, {1 - at}")
        else:
            lines.append(f"{inst.name} = {_identity(want, a)}")
        return lines
    tape = None
    for kind, ty, op in req.extra:
        if kind == "dret":
            args.append(f"{ty} {_convert(lines, tmp, op.value, op.ty, ty)}")
        elif op.ty == "i64":                # a tape held as an integer (Rust's usize)
            tape = tmp()
            lines.append(f"{tape} = inttoptr i64 {op.value} to ptr")
        else:
            tape = op.value
    top = None
    gen.helpers.add(("tape",))
    lines.append(f"call void @__enzyme_cc_tape_check(ptr {tape})")   # not spent by a nofree reverse
    if opts.get("nofree"):                  # keep the tape as it is: it may be reversed again
        top = (tmp(), tmp())
        lines.append(f"{top[0]} = getelementptr i8, ptr {tape}, i64 8")
        lines.append(f"{top[1]} = load i64, ptr {top[0]}")
        if _reverse_frees(gen, req.split_key):
            # the reverse frees blocks the function allocated: another reverse of this tape would
            # read them; the tape is marked spent (top = -1) and tape_check stops that reverse
            top = (top[0], "-1")
    lines.append(f"%ad.rv{req.line} = call {rev_ret} {rev}({', '.join(args + ['ptr ' + tape])})"
                 if rev_ret != "void" else f"call void {rev}({', '.join(args + ['ptr ' + tape])})")
    if top:
        lines.append(f"store i64 {top[1]}, ptr {top[0]}")
    else:
        lines.append(f"call void @__enzyme_cc_tape_end(ptr {tape})")
        if "allocated" not in opts:         # the header is ours unless the caller allocated it
            lines.append(f"call void @free(ptr {tape})")
        gen.declare_raw("@free", "declare void @free(ptr)")
    res = f"%ad.rv{req.line}"
    if req.sret and rev_ret != "void":      # (the declared result returned through memory)
        return _deliver(gen, req, lines, tmp, rev_ret, res, req.sret[0])
    if not inst.name:
        return lines
    if rev_ret == "void":
        zero = "0.0" if is_fp(inst.ty) else "zeroinitializer"
        lines.append(f"{inst.name} = {_identity(inst.ty, zero)}")
        return lines
    if rev_ret.replace(" ", "") == inst.ty.replace(" ", ""):    # the same type, spaced differently
        lines.append(f"{inst.name} = {_identity(inst.ty, res)}")
        return lines
    if not rev_ret.startswith("{") and is_fp(inst.ty):
        lines.append(f"{inst.name} = {_identity(inst.ty, _convert(lines, tmp, res, rev_ret, inst.ty))}")
        return lines
    raise UserError(f"{located(gen.module, req.caller, inst)}: {inst.callee[1:]} returns {inst.ty}, "
                    f"but the derivatives of '{req.fn[1:]}' have type {rev_ret}")


def _reverse_frees(gen, key) -> bool:
    """Whether the reverse of split pair `key`, or of one it calls, frees memory."""
    return any(gen.split_frees.get(k, False) for k in split_tree(gen, key))


def rewrite_primal_reverse(gen, req, names) -> list[str]:
    """__enzyme_autodiff with enzyme_primal_return: the augmented forward and the reverse on a
    fresh tape; returns Enzyme's {primal, {adjoints...}} (the leaves of the declared result in
    that order: the primal result first, then the adjoints)."""
    aug, aug_ret, rev, rev_ret = names
    inst, lines, n = req.inst, [], [0]

    def tmp():
        n[0] += 1
        return f"%ad.pr{req.line}.{n[0]}"
    args = [f"{pty} {_convert(lines, tmp, op.value, op.ty, pty) if op.ty != pty else op.value}"
            for pty, op in req.args]
    h = tmp()
    gen.declare_raw("@malloc", "declare ptr @malloc(i64)")
    gen.declare_raw("@free", "declare void @free(ptr)")
    lines += [f"{h} = call ptr @malloc(i64 {TAPE_HEADER_BYTES})",
              f"call void @__enzyme_cc_tape_start(ptr {h})"]
    vals = []
    call = f"call {aug_ret} {aug}({', '.join(args + ['ptr ' + h])})"
    if aug_ret == "void":
        lines.append(call)
    else:
        r = tmp()
        lines.append(f"{r} = {call}")
        ret = gen.module.function(req.fn).ret_ty
        if aug_ret.startswith("{"):
            prim = tmp()
            lines.append(f"{prim} = extractvalue {aug_ret} {r}, 0")
            r = prim
        vals += [(_extract(lines, tmp, ret, r, path), t) for path, t in _leaves(ret)]
    ret = gen.module.function(req.fn).ret_ty
    dret = [f"{ret} 1.0"] if req.ret_active else []      # the seed, as in combined mode
    rargs = ", ".join(args + dret + ["ptr " + h])
    if rev_ret == "void":
        lines.append(f"call void {rev}({rargs})")
    else:
        res = tmp()
        lines.append(f"{res} = call {rev_ret} {rev}({rargs})")
        vals += [(_extract(lines, tmp, rev_ret, res, path), t) for path, t in _leaves(rev_ret)]
    lines += [f"call void @__enzyme_cc_tape_end(ptr {h})", f"call void @free(ptr {h})"]
    lines = _pack(gen, req, lines, tmp, vals, "values (the primal result and the derivatives)")
    if inst.op == "invoke":
        lines.append(f"br label {inst.targets[0]}")
    return lines


def rewrite_call(gen, req, name, rty, keep=None) -> list[str]:
    """keep: which top-level field of the generated function's result the marker returns (None:
    all of it, -1: none; forward mode's {primal, tangent} when only the primal is wanted)."""
    lines = _rewrite_call(gen, req, name, rty, keep)
    plan = getattr(req, "sret_slots", None)
    if plan:
        lines = _sret_before(gen, plan) + lines + _sret_after(plan)
    if req.inst.op == "invoke":          # the gradient does not unwind: continue normally
        lines.append(f"br label {req.inst.targets[0]}")
    return lines


def _rewrite_call(gen, req, name, rty, keep) -> list[str]:
    inst = req.inst
    counter = [0]

    def tmp():
        counter[0] += 1
        return f"%ad.mk{req.line}.{counter[0]}"

    lines = []
    args = []
    for pty, op in req.args:
        v = op.value
        try:
            args.append(f"{pty} {_convert(lines, tmp, v, op.ty, pty) if op.ty != pty else v}")
        except UserError as e:
            raise UserError(f"{located(gen.module, req.caller, inst)}: {e} (to '{req.fn[1:]}'); "
                            "hint: check the activity markers and the arguments against the "
                            "function's parameters") from None
    call = f"call {rty} {name}({', '.join(args)})"
    want = req.sret[0] if req.sret else inst.ty
    if want in ("void",) or (not inst.name and not req.sret):
        # an unnamed non-void result would take an implicit number and shift the numbering
        lines.append(call if rty == "void" else f"{tmp()} = {call}")
        return lines
    if (rty == "void" or keep == -1) and not _used(req.caller, inst.name):
        # the (unused) result keeps its name, numbering intact
        lines.append(call if rty == "void" else f"{tmp()} = {call}")
        zero = "0.0" if is_fp(want) else "zeroinitializer"
        lines.append(f"store {want} {zero}, ptr {req.sret[1]}" if req.sret else
                     f"{inst.name} = {_identity(want, zero)}")
        return lines
    if rty == "void" or keep == -1:
        marker = next((m for m in ("__enzyme_autodiff", "__enzyme_fwddiff", "__enzyme_reverse",
                                   "__enzyme_augmentfwd") if m in (inst.callee or "")),
                      "the marker")
        why = "returns nothing (the tangents go into the shadows)" if req.mode == "forward" \
            and keep != -1 else "returns nothing (enzyme_noret with enzyme_const_return)" \
            if req.mode == "forward" else "has no active (float) argument"
        raise UserError(f"{located(gen.module, req.caller, inst)}: {marker} is declared to "
                        f"return {want}, but the derivative of '{req.fn[1:]}' {why}; hint: "
                        "declare the marker void, or read the derivatives from the shadows")
    res = tmp()
    lines.append(f"{res} = {call}")
    return _deliver(gen, req, lines, tmp, rty, res, want, keep)


def _deliver(gen, req, lines, tmp, rty, res, want, keep=None) -> list[str]:
    """`lines` (ending with the call defining `res`, of type rty), then the derivative's result
    as the marker's declared result `want`: leaf by leaf (keep: only that top-level field of
    res), into the marker's sret memory or as the value of the marker call's name."""
    inst = req.inst
    got = [(p, t) for p, t in _leaves(rty) if keep is None or p[:1] == [keep]]
    raw = _BYTES.match(want.replace(" ", "")) if req.sret else None
    if raw:             # (rustc's sret of a #[repr(C)] struct of f64s: `[24 x i8]`)
        vals = [(_extract(lines, tmp, rty, res, path), ty) for path, ty in got]
        return _store_bytes(gen, req, lines, tmp, vals, f"derivatives of '{req.fn[1:]}'",
                            int(raw.group(1)))
    want_resolved = gen.module.named_types.get(want, want)
    slots = _leaves(want_resolved)
    if len(slots) < len(got):
        raise UserError(f"{located(gen.module, req.caller, inst)}: __enzyme_autodiff returns {want}, "
                        f"which cannot hold the {len(got)} derivatives of '{req.fn[1:]}'")
    acc = "zeroinitializer"
    for k, (path, sty) in enumerate(slots):
        if k < len(got):
            gpath, gty = got[k]
            v = _convert(lines, tmp, _extract(lines, tmp, rty, res, gpath), gty, sty)
        else:
            continue
        if not path:
            acc = v
            continue
        acc = _insert(lines, tmp, want, acc, path, sty, v)
    if req.sret:
        lines.append(f"store {want} {acc}, ptr {req.sret[1]}")
        return lines
    # the original result name must be defined by the last instruction
    last = lines[-1]
    if acc == res:
        lines[-1] = last.replace(f"{res} = ", f"{inst.name} = ", 1)
    elif last.startswith(acc + " = "):
        lines[-1] = inst.name + last[len(acc):]
    else:
        lines.append(f"{inst.name} = {_identity(want, acc)}")
    return lines


def _sret_before(gen, plan) -> list[str]:
    """The sret slots of a forward derivative (markers._sret_slots): the primal object in the
    marker's result or in a stack temporary, the tangent object after it (or in a temporary),
    zeroed so that fields without a tangent read as zero."""
    p, sh, out = plan["primal"], plan["shadow"], []
    if plan["temp_primal"] or plan["temp_shadow"]:
        out.append(f"{p}.sp = call ptr @llvm.stacksave.p0()")
        gen.declare_raw("@llvm.stacksave.p0", "declare ptr @llvm.stacksave.p0()")
        gen.declare_raw("@llvm.stackrestore.p0", "declare void @llvm.stackrestore.p0(ptr)")
    for name, temp, at in ((p, plan["temp_primal"], 0), (sh, plan["temp_shadow"], plan["shadow_at"])):
        out.append(f"{name} = alloca {plan['ty']}, align 16" if temp else
                   f"{name} = getelementptr i8, ptr {plan['ptr']}, i64 {at}")
    gen.zero_memory(out.append, sh, str(plan["size"]))
    return out


def _sret_after(plan) -> list[str]:
    if plan["temp_primal"] or plan["temp_shadow"]:
        return [f"call void @llvm.stackrestore.p0(ptr {plan['primal']}.sp)"]
    return []


def _used(fn, name) -> bool:
    """Whether an instruction of fn other than its definition names local `name` (the names
    each instruction mentions gathered once per function: a main with hundreds of marker
    calls asks for each)."""
    named = fn.__dict__.get("_named_locals")
    if named is None:
        named = fn.__dict__.setdefault("_named_locals", {})
        for i in fn.insts():
            for t in set(i.toks):
                if t.startswith("%") and t != i.name:
                    named[t] = True
    return name in named


